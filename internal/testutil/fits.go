package testutil

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/tool"
)

// Fits fails the test unless res is what the agent loop can pass to the
// model untouched: at most limit bytes, valid UTF-8 when it is text and a
// valid JSON document when it says it is JSON. A result that passes never
// meets the loop's last-resort cut.
func Fits(t testing.TB, what string, res tool.Result, limit int) {
	t.Helper()
	if len(res.Output) > limit {
		t.Errorf("%s: the result is %d bytes, over the output limit %d: %.300q…", what, len(res.Output), limit, res.Output)
	}
	if res.JSON && !json.Valid([]byte(res.Output)) {
		t.Errorf("%s: the JSON result is not valid JSON: %.300q…", what, res.Output)
	}
	if !res.JSON && !utf8.ValidString(res.Output) {
		t.Errorf("%s: the text result is not valid UTF-8: %.300q…", what, res.Output)
	}
}
