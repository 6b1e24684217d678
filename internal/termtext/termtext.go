// Package termtext makes untrusted text safe to print on a terminal. Text
// chosen by a model, a tool or a repository may hold escape sequences that
// recolour, hide or move text (ESC [8m conceals everything after it), or
// Unicode controls that reorder it; a client that shows such text to a
// person who must judge it (an approval, a tool row, a listing) prints it
// through this package, so every such character is shown as a visible
// escape instead of acting on the terminal.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every control character made visible, newlines and
// tabs included, so the result prints as exactly one line.
func Line(s string) string { return visible(s, false) }

// Block is Line but keeps newlines and tabs, for text shown over several
// lines (assistant text, tool output, an approval summary). A carriage
// return is still made visible (it would move the cursor back over text
// already printed), except in a CRLF line end, where it is dropped.
func Block(s string) string { return visible(s, true) }

// Visible forms:
//   - C0 controls and DEL: the Unicode control pictures (ESC → ␛, CR → ␍,
//     NUL → ␀, DEL → ␡), which read like what they stand for;
//   - C1 controls (U+0080–U+009F), format characters that reorder or hide
//     text (bidi overrides and isolates, zero-width space, word joiner, BOM,
//     tag characters) and the line and paragraph separators: \uXXXX
//     (\UXXXXXXXX above U+FFFF);
//   - bytes that are not UTF-8: \xNN (a raw 0x9B is CSI to some terminals).
//
// The zero-width joiner and non-joiner are left alone: emoji and several
// scripts need them, and they cannot hide or move text.
func visible(s string, keepLines bool) string {
	i := firstUnsafe(s, keepLines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepLines && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// A CRLF line end is a line end, not an overwrite.
		case r == utf8.RuneError && w == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !unsafeRune(r, keepLines):
			b.WriteString(s[i : i+w])
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r > 0xffff:
			b.WriteString(`\U`)
			b.WriteString(pad(r, 8))
		default:
			b.WriteString(`\u`)
			b.WriteString(pad(r, 4))
		}
		i += w
	}
	return b.String()
}

// firstUnsafe is the index of the first byte that needs escaping, or -1.
func firstUnsafe(s string, keepLines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !(keepLines && (c == '\n' || c == '\t')) {
					return i
				}
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 || unsafeRune(r, keepLines) {
			return i
		}
		i += w
	}
	return -1
}

func unsafeRune(r rune, keepLines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keepLines
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r == '\u200c' || r == '\u200d':
		return false
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func pad(r rune, n int) string {
	h := strconv.FormatInt(int64(r), 16)
	if len(h) < n {
		h = strings.Repeat("0", n-len(h)) + h
	}
	return h
}
