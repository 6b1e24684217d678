package diff

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReplace(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	tests := []struct {
		name, old, new string
		existed        bool
		want           Result
	}{
		{"one line changed", old, strings.Replace(old, "e\n", "E\n", 1), true, Result{Added: 1, Removed: 1, Text: `--- a/f.txt
+++ b/f.txt
@@ -2,7 +2,7 @@
 b
 c
 d
-e
+E
 f
 g
 h
`}},
		{"two hunks", old + "k\nl\nm\nn\no\n", "A\n" + old[2:] + "k\nl\nm\nn\nO\n", true, Result{Added: 2, Removed: 2, Text: `--- a/f.txt
+++ b/f.txt
@@ -1,4 +1,4 @@
-a
+A
 b
 c
 d
@@ -12,4 +12,4 @@
 l
 m
 n
-o
+O
`}},
		{"no newline at the end", "x\ny", "x\ny\n", true, Result{Added: 1, Removed: 1, Text: `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 x
-y
\ No newline at end of file
+y
`}},
		{"new file", "", "one\ntwo\n", false, Result{Added: 2, Text: `--- /dev/null
+++ b/f.txt
@@ -0,0 +1,2 @@
+one
+two
`}},
		{"emptied", "one\n", "", true, Result{Removed: 1, Text: `--- a/f.txt
+++ b/f.txt
@@ -1 +0,0 @@
-one
`}},
		{"identical", old, old, true, Result{Note: "no change: the new content is the file's content"}},
		{"new empty file", "", "", false, Result{Note: "a new, empty file"}},
		{"binary", "a\x00b", "text", true, Result{Note: "binary content (a NUL byte or text that is not UTF-8): 3 bytes replaced by 4 bytes; no diff is shown"}},
		{"not UTF-8", "text", "a\xffb", true, Result{Note: "binary content (a NUL byte or text that is not UTF-8): 4 bytes replaced by 3 bytes; no diff is shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Replace("f.txt", []byte(tt.old), tt.existed, []byte(tt.new), Bounds{})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// apply applies a unified diff produced by Replace to old; the diff is
// correct when this gives the new content back.
func apply(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitLines(old)
	var out []string
	ai := 0
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			r := strings.Fields(l)[1][1:]
			start, _, _ := strings.Cut(r, ",")
			n, _ := strconv.Atoi(start)
			if strings.HasSuffix(r, ",0") {
				n++ // "-k,0" names the line before an empty range
			}
			for ; ai < n-1; ai++ {
				out = append(out, a[ai])
			}
		case l == `\ No newline at end of file`:
			out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
		case l[0] == ' ':
			if a[ai] != l[1:]+"\n" && a[ai] != l[1:] {
				t.Fatalf("context line %q does not match %q", l, a[ai])
			}
			out = append(out, l[1:]+"\n")
			ai++
		case l[0] == '-':
			ai++
		case l[0] == '+':
			out = append(out, l[1:]+"\n")
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
	}
	out = append(out, a[ai:]...)
	return strings.Join(out, "")
}

// TestRoundTrip: random edits of random files; applying the diff gives
// the new content, and the counts agree with the +/- lines.
func TestRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		n := rnd.IntN(60)
		var old []string
		for j := range n {
			old = append(old, fmt.Sprintf("line %d %d\n", j, rnd.IntN(3)))
		}
		nw := append([]string(nil), old...)
		for range rnd.IntN(8) {
			switch k := rnd.IntN(3); {
			case k == 0 && len(nw) > 0:
				p := rnd.IntN(len(nw))
				nw = append(nw[:p], nw[p+1:]...)
			case k == 1:
				p := rnd.IntN(len(nw) + 1)
				nw = append(nw[:p], append([]string{fmt.Sprintf("new %d\n", rnd.IntN(100))}, nw[p:]...)...)
			case len(nw) > 0:
				nw[rnd.IntN(len(nw))] = fmt.Sprintf("changed %d\n", rnd.IntN(100))
			}
		}
		o, w := strings.Join(old, ""), strings.Join(nw, "")
		if rnd.IntN(4) == 0 && len(w) > 0 {
			w = strings.TrimSuffix(w, "\n")
		}
		r := Replace("f", []byte(o), true, []byte(w), Bounds{})
		if o == w {
			continue
		}
		if r.Omitted != 0 || r.Note != "" {
			t.Fatalf("case %d: a small diff was bounded: %+v", i, r)
		}
		if got := apply(t, o, r.Text); got != w {
			t.Fatalf("case %d: applying the diff gives\n%q\nwant\n%q\ndiff:\n%s", i, got, w, r.Text)
		}
		plus, minus := 0, 0
		for _, l := range strings.Split(r.Text, "\n")[2:] {
			if strings.HasPrefix(l, "+") {
				plus++
			} else if strings.HasPrefix(l, "-") {
				minus++
			}
		}
		if plus != r.Added || minus != r.Removed {
			t.Fatalf("case %d: counts %d/%d, lines +%d -%d", i, r.Added, r.Removed, plus, minus)
		}
	}
}

// TestBounds: a diff longer than the bounds stops at a line end within
// them and counts every line it leaves out; the change counts stay those
// of the whole change.
func TestBounds(t *testing.T) {
	var old, nw strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&old, "line %d\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&nw, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&nw, "line %d\n", i)
		}
	}
	full := Replace("f", []byte(old.String()), true, []byte(nw.String()), Bounds{})
	total := strings.Count(full.Text, "\n")
	if full.Omitted != 0 || full.Added != 200 || full.Removed != 200 {
		t.Fatalf("full diff: %d lines, omitted %d, +%d -%d", total, full.Omitted, full.Added, full.Removed)
	}
	for _, b := range []Bounds{{MaxLines: 50}, {MaxBytes: 1000}, {MaxLines: 1}} {
		r := Replace("f", []byte(old.String()), true, []byte(nw.String()), b)
		shown := strings.Count(r.Text, "\n")
		if shown+r.Omitted != total {
			t.Errorf("%+v: %d shown + %d omitted != %d lines", b, shown, r.Omitted, total)
		}
		if !strings.HasPrefix(full.Text, r.Text) {
			t.Errorf("%+v: the bounded text is not the start of the full diff", b)
		}
		if b.MaxLines > 0 && shown > b.MaxLines || b.MaxBytes > 0 && len(r.Text) > b.MaxBytes {
			t.Errorf("%+v: %d lines, %d bytes shown", b, shown, len(r.Text))
		}
		if r.Added != 200 || r.Removed != 200 {
			t.Errorf("%+v: counts +%d -%d, want those of the whole change", b, r.Added, r.Removed)
		}
	}
	// A new file: its head.
	r := Create("new.txt", []byte(nw.String()), Bounds{MaxLines: 10})
	if got := strings.Count(r.Text, "\n"); got != 10 || r.Omitted != 2000+3-10 || r.Added != 2000 {
		t.Errorf("head of a new file: %d lines shown, %d omitted, +%d", got, r.Omitted, r.Added)
	}
	// A long line is cut, and says by how much.
	r = Create("min.js", []byte(strings.Repeat("é", 1000)+"\n"), Bounds{MaxLineBytes: 11})
	if want := "+ééééé … (+1990 bytes on this line)\n"; !strings.HasSuffix(r.Text, want) {
		t.Errorf("long line: %q, want suffix %q", r.Text, want)
	}
	// Inputs over MaxInput are not diffed.
	r = Replace("big", []byte("0123456789"), true, []byte("x"), Bounds{MaxInput: 5})
	if r.Text != "" || !strings.Contains(r.Note, "the current file has 10 bytes, more than the 5 bytes a diff is computed for") {
		t.Errorf("over MaxInput: %+v", r)
	}
}
