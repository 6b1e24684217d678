package tool

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/textcut"
)

// Every result a tool returns fits Env.OutputLimit bytes as the model sees
// it: JSON results are sized after encoding (a string of control bytes can
// grow sixfold when escaped), and plain-text results are fitted by the
// Registry with FitText. The loop's own cut is a last resort that a
// built-in tool never triggers.

// JSONLen is how many bytes EncodeJSON spends on the characters of s (the
// quotes excluded).
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		n += jsonRuneLen(r, w)
		i += w
	}
	return n
}

// FitJSONSuffix returns the longest suffix of s, starting on a character
// boundary, whose JSON string encoding (quotes excluded) takes at most
// budget bytes.
func FitJSONSuffix(s string, budget int) string {
	n, i := 0, len(s)
	for i > 0 {
		r, w := utf8.DecodeLastRuneInString(s[:i])
		n += jsonRuneLen(r, w)
		if n > budget {
			break
		}
		i -= w
	}
	return s[i:]
}

// CutMarker is the line that stands for n bytes left out of the middle of
// a text.
func CutMarker(n int64) string { return "\n[… " + strconv.FormatInt(n, 10) + " bytes cut …]\n" }

// FitText keeps a plain-text s within limit bytes: unchanged when it fits,
// else its beginning and its end around a CutMarker naming how much was
// left out, cut on character boundaries. When the limit leaves no room for
// the marker, only the beginning is kept. The bool says whether s was cut.
func FitText(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	room := limit - len(CutMarker(int64(len(s))))
	if room < 2 {
		return TruncateUTF8(s, limit), true
	}
	head := TruncateUTF8(s, room/2)
	tail := textcut.TrimStart(s[len(s)-(room-len(head)):])
	return head + CutMarker(int64(len(s)-len(head)-len(tail))) + tail, true
}

// JSONWithin encodes v as a JSON result (EncodeJSON: no HTML escaping).
// If the encoding is longer than limit (> 0), the result is instead a
// failed `limit` result saying so; tools shorten their long fields first,
// so this only happens when the limit is smaller than a result's fixed
// part.
func JSONWithin(success bool, kind ErrorKind, v any, truncated bool, limit int) Result {
	out, err := EncodeJSON(v)
	if err != nil {
		return Fail(Failed, "encode result: %v", err)
	}
	if limit > 0 && len(out) > limit {
		return TooSmall(limit, len(out))
	}
	return Result{Success: success, Error: kind, Output: out, JSON: true, Truncated: truncated}
}

// TooSmall is the failed result of a call whose smallest useful result
// (need bytes) does not fit tools.output_limit_bytes.
func TooSmall(limit, need int) Result {
	return Result{Error: Limit, Truncated: true,
		Output: fmt.Sprintf("tools.output_limit_bytes (%d) is too small for this result (at least %d bytes); raise it", limit, need)}
}

// fitted returns res with a plain-text output fitted to limit. JSON
// outputs are the tool's to size (cutting them here would break them).
func fitted(res Result, limit int) Result {
	if res.JSON {
		return res
	}
	if out, cut := FitText(res.Output, limit); cut {
		res.Output, res.Truncated = out, true
	}
	return res
}
