package termtext

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Writer makes a stream visible as Block makes a string visible: whatever
// is written through it reaches the underlying writer with every control,
// format and non-UTF-8 character shown as its visible form, newlines and
// tabs kept. A command line writes its stdout and stderr through one, so
// no text it prints can act on the terminal, whether or not the code that
// printed it remembered to call Line or Block. Text already made visible
// passes unchanged (the visible forms are printable).
//
// A write may end inside a UTF-8 sequence or on a carriage return whose
// line feed comes next; those last bytes wait for the next write, and
// Flush writes them out. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p made visible; it reports len(p) when the underlying
// writer took everything.
func (v *Writer) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	buf := p
	if len(v.pending) > 0 {
		buf = append(v.pending, p...)
		v.pending = nil
	}
	cut := heldBack(buf)
	if cut < len(buf) {
		v.pending = append([]byte(nil), buf[cut:]...)
	}
	if err := v.write(buf[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what an earlier write left waiting (a carriage return, the
// start of a UTF-8 sequence) in its visible form.
func (v *Writer) Flush() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	p := v.pending
	v.pending = nil
	return v.write(p)
}

func (v *Writer) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	s := string(p)
	if firstUnsafe(s, true) < 0 {
		_, err := v.w.Write(p)
		return err
	}
	_, err := io.WriteString(v.w, visible(s, true))
	return err
}

// heldBack is where the bytes that must wait for the next write begin: a
// final carriage return (a CRLF is a line end, a lone CR is not), or the
// start of a UTF-8 sequence the write cut short.
func heldBack(p []byte) int {
	n := len(p)
	if n == 0 {
		return 0
	}
	if p[n-1] == '\r' {
		return n - 1
	}
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
		c := p[i]
		if c < utf8.RuneSelf {
			return n
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			return n
		}
	}
	return n
}

// JSON returns the JSON text b with every character Block would show as
// an escape written as a JSON escape of itself instead (\u009b, \u202e,
// a surrogate pair above U+FFFF), so the text decodes to the same value
// and prints inert. Bytes that are not UTF-8 become \ufffd, which is what
// a JSON decoder reads them as. Newlines, tabs and carriage returns are
// kept: in valid JSON they can only be whitespace between tokens.
func JSON(b []byte) []byte {
	s := string(b)
	if firstUnsafe(s, true) < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			out = append(out, s[i])
		case r == utf8.RuneError && w == 1:
			out = append(out, `\ufffd`...)
		case unsafeRune(r, true):
			if r > 0xffff {
				r -= 0x10000
				out = appendU(appendU(out, 0xd800+(r>>10)), 0xdc00+(r&0x3ff))
			} else {
				out = appendU(out, r)
			}
		default:
			out = append(out, s[i:i+w]...)
		}
		i += w
	}
	return out
}

func appendU(b []byte, r rune) []byte {
	return append(append(b, `\u`...), pad(r, 4)...)
}
