package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The TUI checks a prompt against the limit session.started gave
// (session.max_prompt_bytes), not only the default: an over-limit prompt
// is refused with its size and kept in the composer, nothing is sent; one
// at the limit is sent.
func TestPromptLimitFromSession(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Session.MaxPromptBytes = 10 })
	h.submit("eleven byte")
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("an 11-byte prompt over a 10-byte limit was sent: %v", got)
	}
	if f := h.frame(); !strings.Contains(f, "prompt of 11 bytes is over the 10-byte limit") {
		t.Errorf("no refusal naming the sizes:\n%s", f)
	}
	if h.m.composer.Value() != "eleven byte" {
		t.Errorf("the composer lost the prompt: %q", h.m.composer.Value())
	}
	h.keys(tea.KeyPressMsg{Code: tea.KeyBackspace})
	h.keys(enter)
	if got := h.rec.take(); len(got) != 1 {
		t.Errorf("a 10-byte prompt at the limit: sent %v, want one turn.start", got)
	}
}
