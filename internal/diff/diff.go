// Package diff computes the bounded unified diff of a planned file change:
// what a person reads before approving a write that replaces a file (or
// the head of a file it creates). It diffs lines with Myers' algorithm as
// github.com/sergi/go-diff implements it (each line becomes one symbol),
// and bounds what it returns in lines and bytes, counting what it leaves
// out. It never reads files itself.
package diff

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Bounds limit a diff. The zero value of a field takes its default.
type Bounds struct {
	// Context is the number of unchanged lines shown around a change.
	Context int
	// MaxLines and MaxBytes bound Result.Text; what does not fit is
	// counted in Result.Omitted.
	MaxLines, MaxBytes int
	// MaxLineBytes cuts a longer line, saying how much was cut.
	MaxLineBytes int
	// MaxInput is the largest side diffed; a larger one gets a Note.
	MaxInput int
}

// Defaults.
const (
	DefaultContext      = 3
	DefaultMaxLines     = 5000
	DefaultMaxBytes     = 512 << 10
	DefaultMaxLineBytes = 1000
	DefaultMaxInput     = 8 << 20
)

func (b Bounds) withDefaults() Bounds {
	if b.Context <= 0 {
		b.Context = DefaultContext
	}
	if b.MaxLines <= 0 {
		b.MaxLines = DefaultMaxLines
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMaxBytes
	}
	if b.MaxLineBytes <= 0 {
		b.MaxLineBytes = DefaultMaxLineBytes
	}
	if b.MaxInput <= 0 {
		b.MaxInput = DefaultMaxInput
	}
	return b
}

// Result is a bounded unified diff.
type Result struct {
	// Text is the unified diff ("--- a/path", "+++ b/path", hunks), each
	// line ended by a newline; empty when there is no diff to show (see
	// Note).
	Text string
	// Added and Removed count the lines of the whole change, also those
	// left out of Text.
	Added, Removed int
	// Omitted is the number of diff lines left out of Text by the bounds.
	Omitted int
	// Note says why there is no diff, or what is special about it.
	Note string
}

// Create is the diff of a new file: its head, as added lines.
func Create(path string, content []byte, b Bounds) Result {
	return Replace(path, nil, false, content, b)
}

// Replace is the diff from old to content for the file at path (a
// workspace-relative name shown in the headers); existed says old is a
// file's content rather than no file at all.
func Replace(path string, old []byte, existed bool, content []byte, b Bounds) Result {
	b = b.withDefaults()
	switch {
	case len(old) > b.MaxInput:
		return Result{Note: fmt.Sprintf("the current file has %s, more than the %s a diff is computed for", size(len(old)), size(b.MaxInput))}
	case len(content) > b.MaxInput:
		return Result{Note: fmt.Sprintf("the new content has %s, more than the %s a diff is computed for", size(len(content)), size(b.MaxInput))}
	case binary(old) || binary(content):
		return Result{Note: fmt.Sprintf("binary content (a NUL byte or text that is not UTF-8): %s replaced by %s; no diff is shown", size(len(old)), size(len(content)))}
	case existed && bytes.Equal(old, content):
		return Result{Note: "no change: the new content is the file's content"}
	case !existed && len(content) == 0:
		return Result{Note: "a new, empty file"}
	}
	a, bl := splitLines(string(old)), splitLines(string(content))
	diffs := lineDiffs(string(old), string(content))
	w := &writer{b: b}
	from := "a/" + path
	if !existed {
		from = "/dev/null"
	}
	w.line("--- " + from)
	w.line("+++ b/" + path)
	for _, h := range hunks(diffs, len(a), len(bl), b.Context) {
		w.hunk(h, a, bl)
	}
	return Result{Text: w.text.String(), Added: w.added, Removed: w.removed, Omitted: w.omitted}
}

// binary reports content that is not shown as text.
func binary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) }

// splitLines splits s after each newline; the last line may have none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// change replaces the lines a[Start:End] by b[ReplStart:ReplEnd].
type change struct {
	Start, End, ReplStart, ReplEnd int
}

// Timeout bounds the search for the shortest diff; past it the diff is
// still exact (it turns the old content into the new) but may show more
// lines than the shortest one would.
const Timeout = time.Second

// lineDiffs lists the changes from old to new, line by line: each distinct
// line is mapped to one rune, the rune sequences are diffed, and each rune
// of a result counts one line.
func lineDiffs(old, new string) []change {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = Timeout
	ra, rb, _ := dmp.DiffLinesToRunes(old, new)
	var out []change
	ai, bi := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		if d.Type == diffmatchpatch.DiffEqual {
			ai, bi = ai+n, bi+n
			continue
		}
		if k := len(out) - 1; k < 0 || out[k].End != ai || out[k].ReplEnd != bi {
			out = append(out, change{Start: ai, End: ai, ReplStart: bi, ReplEnd: bi})
		}
		c := &out[len(out)-1]
		if d.Type == diffmatchpatch.DiffDelete {
			ai += n
			c.End = ai
		} else {
			bi += n
			c.ReplEnd = bi
		}
	}
	return out
}

// hunk is a run of changes close enough to share their context: lines
// a[a0:a1] become b[b0:b1], with the changes in diffs.
type hunk struct {
	a0, a1, b0, b1 int
	diffs          []change
}

// hunks groups changes whose contexts touch, as diff -u does.
func hunks(diffs []change, alen, blen, ctx int) []hunk {
	var out []hunk
	for i := 0; i < len(diffs); {
		j := i + 1
		for j < len(diffs) && diffs[j].Start-diffs[j-1].End <= 2*ctx {
			j++
		}
		first, last := diffs[i], diffs[j-1]
		pre := min(ctx, first.Start)
		post := min(ctx, alen-last.End)
		out = append(out, hunk{
			a0: first.Start - pre, a1: last.End + post,
			b0: first.ReplStart - pre, b1: last.ReplEnd + post,
			diffs: diffs[i:j],
		})
		i = j
	}
	return out
}

// writer emits diff lines within the bounds and counts the rest.
type writer struct {
	b                       Bounds
	text                    strings.Builder
	lines                   int
	added, removed, omitted int
	full                    bool
}

func (w *writer) line(s string) {
	if !w.full {
		if len(s) > w.b.MaxLineBytes {
			cut := s[:w.b.MaxLineBytes]
			for !utf8.ValidString(cut) {
				cut = cut[:len(cut)-1]
			}
			s = cut + " … (+" + strconv.Itoa(len(s)-len(cut)) + " bytes on this line)"
		}
		if w.lines < w.b.MaxLines && w.text.Len()+len(s)+1 <= w.b.MaxBytes {
			w.text.WriteString(s)
			w.text.WriteByte('\n')
			w.lines++
			return
		}
		w.full = true
	}
	w.omitted++
}

// body writes one line of a file with its mark; a last line without a
// newline is followed by the marker diff uses for it.
func (w *writer) body(mark byte, l string) {
	text, nl := strings.CutSuffix(l, "\n")
	if w.full {
		w.omitted++
	} else {
		w.line(string(mark) + text)
	}
	if !nl {
		w.line(`\ No newline at end of file`)
	}
}

func (w *writer) hunk(h hunk, a, b []string) {
	w.line("@@ -" + span(h.a0, h.a1-h.a0) + " +" + span(h.b0, h.b1-h.b0) + " @@")
	ai := h.a0
	for _, d := range h.diffs {
		for ; ai < d.Start; ai++ {
			w.body(' ', a[ai])
		}
		for _, l := range a[d.Start:d.End] {
			w.body('-', l)
		}
		for _, l := range b[d.ReplStart:d.ReplEnd] {
			w.body('+', l)
		}
		w.removed += d.End - d.Start
		w.added += d.ReplEnd - d.ReplStart
		ai = d.End
	}
	for ; ai < h.a1; ai++ {
		w.body(' ', a[ai])
	}
}

// span is a hunk range as unified diffs write it: the first line (1-based)
// and the count, the count left out when it is 1.
func span(start, n int) string {
	if n == 0 {
		return strconv.Itoa(start) + ",0"
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
