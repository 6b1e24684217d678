package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAgentsMD(t *testing.T) {
	ws := t.TempDir()
	if got, err := ReadAgentsMD(ws); err != nil || got != "" {
		t.Fatalf("missing AGENTS.md: %q, %v", got, err)
	}
	big := strings.Repeat("é", MaxAgentsMDBytes) // twice the bound in bytes
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAgentsMD(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "[AGENTS.md truncated]") || len(got) > MaxAgentsMDBytes+32 || !strings.HasPrefix(got, "éé") {
		t.Fatalf("bounded AGENTS.md: %d bytes, tail %q", len(got), got[len(got)-30:])
	}
	// A symlink leaving the workspace is not followed.
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws2 := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws2, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadAgentsMD(ws2); err == nil || strings.Contains(got, "outside") {
		t.Fatalf("escaping symlink: %q, %v", got, err)
	}
}

func TestPrompt(t *testing.T) {
	p := Prompt("  base prompt\n", "/ws", "Run make lint.", "Skills:\n- a: b")
	for _, want := range []string{"base prompt\n\nWorkspace: /ws", "# AGENTS.md", "Run make lint.", "Skills:\n- a: b"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := Prompt("base", "/ws", "", ""); strings.Contains(p, "AGENTS.md") || strings.Contains(p, "Skills") {
		t.Errorf("empty parts rendered:\n%s", p)
	}
}
