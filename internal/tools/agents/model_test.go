package agents

import (
	"regexp"
	"strings"
	"testing"
)

// ValidModel is hand-written so that no expression is compiled when the
// program starts; it must accept exactly what the expression did.
func TestValidModelMatchesItsExpression(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9._:/@\[\]-]{1,128}$`)
	for _, m := range []string{"", "gpt-5.1-codex", "sonnet", "claude-opus-4@20250101", "-m", "@x", "a b", "a\nb",
		"openai/gpt-4o:latest", "[1m]", "x{y}", "é", strings.Repeat("a", 128), strings.Repeat("a", 129), "a;rm", "a$b"} {
		want := re.MatchString(m) && m[0] != '-' && m[0] != '@'
		if got := ValidModel(m); got != want {
			t.Errorf("ValidModel(%q) = %v, want %v", m, got, want)
		}
	}
}
