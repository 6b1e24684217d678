package termtext

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestWriterIsBlockOfTheStream writes hostile text through a Writer cut
// at every byte boundary (so escapes, UTF-8 sequences and CRLF are split
// across writes) and wants exactly Block of the whole text.
func TestWriterIsBlockOfTheStream(t *testing.T) {
	in := "safe \x1b[8mhidden\x1b[0m\r\n\x1b]52;c;ZXZpbA==\x07\x1b]0;title\x07 ab\u202edc \u009b31m x\x9by 日本 👍\r over\tend\r"
	want := Block(in)
	for cut := 0; cut <= len(in); cut++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("cut %d: Write = %d, %v", cut, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("cut %d:\n got %q\nwant %q", cut, out.String(), want)
		}
	}
	// One byte a write.
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := range len(in) {
		w.Write([]byte{in[i]})
	}
	w.Flush()
	if out.String() != want {
		t.Fatalf("byte by byte:\n got %q\nwant %q", out.String(), want)
	}
}

// TestWriterPassesVisibleText: text already made visible, and plain text,
// pass unchanged, so a field printed with Line through a Writer is not
// escaped twice.
func TestWriterPassesVisibleText(t *testing.T) {
	for _, s := range []string{"plain — ünï 日本\n\ttab\n", Line("\x1b[8m\u202e\x9b"), Block("a\r\nb\x1b]0;x\x07")} {
		var out bytes.Buffer
		w := NewWriter(&out)
		w.Write([]byte(s))
		w.Flush()
		if out.String() != strings.ReplaceAll(s, "\r\n", "\n") {
			t.Errorf("%q became %q", s, out.String())
		}
	}
}

// TestWriterHoldsOnlyWhatItMust: a write that ends in the middle of a rune
// or on CR holds those bytes back, and only those.
func TestWriterHoldsOnlyWhatItMust(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("ab\xe6\x97"))
	if out.String() != "ab" {
		t.Fatalf("after a cut rune: %q", out.String())
	}
	w.Write([]byte("\xa5\r"))
	if out.String() != "ab日" {
		t.Fatalf("after the rest and a CR: %q", out.String())
	}
	w.Flush()
	if out.String() != "ab日␍" {
		t.Fatalf("after Flush: %q", out.String())
	}
}

// TestJSONKeepsTheValue: JSON output escaped for the terminal decodes to
// the same value and holds nothing Block would change.
func TestJSONKeepsTheValue(t *testing.T) {
	v := map[string]any{"title": "a\x1b[8mb\u202ec\u009bd\x7fe\U000E0041f\u200bg\ufeff 日本 👍", "n": 1.5, "list": []any{"x\ny", "\u2028"}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	safe := JSON(b)
	if Block(string(safe)) != string(safe) {
		t.Errorf("JSON left something unsafe: %q", safe)
	}
	var got map[string]any
	if err := json.Unmarshal(safe, &got); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, safe)
	}
	if got["title"] != v["title"] {
		t.Errorf("value changed: %q, want %q", got["title"], v["title"])
	}
	// Invalid UTF-8 in a string reads as U+FFFD either way.
	raw := []byte("{\"s\":\"a\x9bb\"}\n")
	var a, c map[string]any
	json.Unmarshal(raw, &a)
	if err := json.Unmarshal(JSON(raw), &c); err != nil || a["s"] != c["s"] {
		t.Errorf("invalid byte: %q vs %q (%v)", a["s"], c["s"], err)
	}
	plain := []byte(`{"a":"b"}`)
	if n := testing.AllocsPerRun(10, func() { _ = JSON(plain) }); n > 1 {
		t.Errorf("%v allocations for clean JSON", n)
	}
}

// BenchmarkWriter is the cost the visible writer adds to a command's
// output: clean text (the common case, passed through) and text full of
// escapes, in 4 KiB writes.
func BenchmarkWriter(b *testing.B) {
	clean := []byte(strings.Repeat("plain output line, ünïcode 日本\n", 128))
	dirty := []byte(strings.Repeat("\x1b[31mred\x1b[0m \u202eflip\r\n", 256))
	for _, tc := range []struct {
		name string
		p    []byte
	}{{"clean", clean}, {"escapes", dirty}} {
		b.Run(tc.name, func(b *testing.B) {
			w := NewWriter(io.Discard)
			b.SetBytes(int64(len(tc.p)))
			for b.Loop() {
				w.Write(tc.p)
			}
		})
	}
}
