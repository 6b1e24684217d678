package tool

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/textcut"
)

// Helpers every tool needs to keep its output within a byte budget without
// breaking UTF-8 or JSON.

// TruncateUTF8 cuts s to at most n bytes on a character boundary. It is
// textcut.Prefix under the name every tool already cuts its output with.
func TruncateUTF8(s string, n int) string { return textcut.Prefix(s, n) }

// EncodeJSON marshals v without HTML escaping (source code is full of <, >
// and &, which json.Marshal would turn into six-byte escapes) and without
// the encoder's trailing newline.
func EncodeJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// jsonRuneLen is how many bytes EncodeJSON spends on one rune of a string
// (r decoded from width bytes), matching encoding/json without HTML escaping.
func jsonRuneLen(r rune, width int) int {
	switch {
	case r == utf8.RuneError && width == 1:
		return 6 // \ufffd
	case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20:
		return 6 // \u00XX
	case r == '\u2028' || r == '\u2029':
		return 6
	}
	return width
}

// FitJSON returns the longest prefix of s, cut at a character boundary,
// whose JSON string encoding (quotes excluded) takes at most budget bytes.
func FitJSON(s string, budget int) string {
	n := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		n += jsonRuneLen(r, w)
		if n > budget {
			return s[:i]
		}
		i += w
	}
	return s
}
