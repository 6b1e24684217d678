package cli

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/store"
)

// TestSessionsShowUsage: `scv sessions show` prints the session's tokens
// and cost summed over its turns, or says no price is known.
func TestSessionsShowUsage(t *testing.T) {
	st, env := seededHome(t, "[providers.openai]\nbase_url = \"http://127.0.0.1:1/v1\"\n", "test")
	ws := t.TempDir()
	cost := 0.0123
	for id, usages := range map[string][]store.Usage{
		"s_0c05700000-1": {{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100, CacheReadTokens: 600, CostUSD: &cost}, {InputTokens: 10, OutputTokens: 5, TotalTokens: 15}},
		"s_0c05700000-2": {{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}},
	} {
		if _, err := st.CreateSession(t.Context(), store.NewSession{ID: id, Workspace: ws, Provider: "openai", Model: "m", Origin: store.OriginExec}); err != nil {
			t.Fatal(err)
		}
		for i, u := range usages {
			tl, err := st.BeginTurn(t.Context(), id, "t"+string(rune('1'+i)), "p")
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.Complete(t.Context(), store.Completion{Usage: u, Answer: "a"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Release(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out, errs, code := runCLI(t, env, "sessions", "show", "s_0c05700000-1")
	if want := "usage     1115 tokens (1010 in, 600 of them cached; 105 out) · $0.0123\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("show: exit %d, want %q in\n%s%s", code, want, out, errs)
	}
	out, _, _ = runCLI(t, env, "sessions", "show", "s_0c05700000-2")
	if !strings.Contains(out, "usage     15 tokens (10 in, 0 of them cached; 5 out) · no known price\n") {
		t.Errorf("show of an unpriced session:\n%s", out)
	}
}
