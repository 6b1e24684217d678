package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadInstructions(t *testing.T) {
	write := func(dir, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home, ws := t.TempDir(), t.TempDir()
	if got, err := ReadInstructions(home, ws); err != nil || got != (Instructions{}) {
		t.Fatalf("no instruction files: %+v, %v", got, err)
	}
	// CLAUDE.md stands in when there is no AGENTS.md; AGENTS.md wins.
	write(ws, "CLAUDE.md", "claude rules")
	if got, err := ReadInstructions(home, ws); err != nil || got.Project != "claude rules" || got.ProjectFile != "CLAUDE.md" {
		t.Fatalf("CLAUDE.md alone: %+v, %v", got, err)
	}
	big := strings.Repeat("é", MaxAgentsMDBytes) // twice the bound in bytes
	write(ws, "AGENTS.md", big)
	write(home, "AGENTS.md", "my own rules")
	got, err := ReadInstructions(home, ws)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProjectFile != "AGENTS.md" || !strings.HasSuffix(got.Project, "[AGENTS.md truncated]") || len(got.Project) > MaxAgentsMDBytes+32 || !strings.HasPrefix(got.Project, "éé") {
		t.Fatalf("bounded AGENTS.md (%s): %d bytes", got.ProjectFile, len(got.Project))
	}
	if got.User != "my own rules" {
		t.Errorf("user instructions: %q", got.User)
	}
	// A symlink leaving the workspace is not followed, and CLAUDE.md does
	// not stand in for an AGENTS.md that could not be read.
	outside := filepath.Join(t.TempDir(), "secret.md")
	write(filepath.Dir(outside), "secret.md", "outside")
	ws2 := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws2, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	write(ws2, "CLAUDE.md", "claude rules")
	if got, err := ReadInstructions("", ws2); err == nil || strings.Contains(got.Project, "outside") || got.Project != "" {
		t.Fatalf("escaping symlink: %+v, %v", got, err)
	}
}

func TestPrompt(t *testing.T) {
	p := Prompt("  base prompt\n", "/ws", Instructions{User: "Answer in French.", Project: "Run make lint.", ProjectFile: "CLAUDE.md"}, "Skills:\n- a: b")
	for _, want := range []string{"base prompt\n\nWorkspace: /ws", "# Your user's instructions", "Answer in French.\n\n# CLAUDE.md (project", "Run make lint.", "Skills:\n- a: b"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := Prompt("base", "/ws", Instructions{}, ""); strings.Contains(p, "AGENTS.md") || strings.Contains(p, "instructions") || strings.Contains(p, "Skills") {
		t.Errorf("empty parts rendered:\n%s", p)
	}
}
