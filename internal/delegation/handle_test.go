package delegation

import (
	"regexp"
	"testing"
)

// ValidHandle is hand-written so that no expression is compiled when the
// program starts; it must accept exactly what the expression did.
func TestValidHandleMatchesItsExpression(t *testing.T) {
	re := regexp.MustCompile(`^[a-z][a-z0-9_]*-[0-9a-f]{6}$`)
	for _, h := range []string{"", "codex-0a1b2c", "c-000000", "agent_x-abcdef", "Codex-0a1b2c", "1codex-0a1b2c",
		"codex-0a1b2", "codex-0a1b2c3", "codex-0A1B2C", "codex0a1b2c", "-0a1b2c", "codex--0a1b2c", "co-dex-0a1b2c",
		"codex-0a1b2g", "codex_-ffffff", "x-ffffff\n", "é-000000"} {
		if got, want := ValidHandle(h), re.MatchString(h); got != want {
			t.Errorf("ValidHandle(%q) = %v, the expression says %v", h, got, want)
		}
	}
}
