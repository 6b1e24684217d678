package web

import (
	"regexp"
	"testing"
)

// stripTags replaces the expression `<[^>]*>` so that nothing is compiled
// when the program starts; it must remove exactly what the expression did.
func TestStripTagsMatchesItsExpression(t *testing.T) {
	re := regexp.MustCompile(`<[^>]*>`)
	for _, s := range []string{"", "plain", "<b>bold</b> text", "a < b", "a <b", "x > y", "<<a>>", "<a href='x'>l</a>",
		"<>", "one <strong>two</strong> <em>three", "tail <"} {
		if got, want := stripTags(s), re.ReplaceAllString(s, ""); got != want {
			t.Errorf("stripTags(%q) = %q, want %q", s, got, want)
		}
	}
}
