package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestStoredSessionsUnderTmux runs the real binary in a tmux pane against
// a real daemon: a conversation, then `scv --continue` shows it again as
// it was (the tool row, the answer) and continues it; Ctrl+R rewinds to
// the first prompt, which is edited and sent as a fork; `scv --resume`
// without an id opens the picker, which lists both sessions, and Enter
// opens the one chosen.
func TestStoredSessionsUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("call_1", "read", `{"path":"notes.txt"}`))
	fake.Script(modeltest.Text("The notes say **hello from notes**."))
	fake.Script(modeltest.Text("Second answer: forty-two."))
	fake.Script(modeltest.Text("Continued answer."))
	fake.Script(modeltest.Text("Forked answer about bananas."))
	writeConfig(t, home, fake.URL())
	writeFile(t, ws, "notes.txt", "hello from notes\n")
	startDaemon(t, scv, home)
	run := func(flags string) *pane { return startSCV(t, 100, 40, scv, home, ws, flags) }

	p := run("")
	p.waitFor("fake-model", "connected", "ready")
	p.submit("what do the notes say?")
	p.waitFor("hello from notes.", "ready")
	p.submit("and the answer?")
	live := p.waitFor("forty-two", "ready")
	p.quit()

	// --continue redraws the conversation as it was shown live.
	p = run("--continue")
	s := p.waitFor("forty-two", "ready")
	for _, want := range []string{"› what do the notes say?", "read notes.txt", "The notes say hello from notes.", "› and the answer?", "Second answer: forty-two."} {
		if !strings.Contains(live, want) {
			t.Fatalf("the live screen lacks %q (test setup):\n%s", want, live)
		}
		if !strings.Contains(s, want) {
			t.Errorf("the resumed screen lacks %q:\n%s", want, s)
		}
	}
	p.submit("continue please")
	p.waitFor("Continued answer.", "ready")
	if got := lastUserTexts(fake); len(got) != 3 || got[0] != "what do the notes say?" {
		t.Errorf("the continued turn sent the user messages %q; want the whole conversation", got)
	}

	// Ctrl+R: rewind to the first prompt, edit it, send it as a fork.
	p.keys("C-r")
	p.waitFor("Rewind: pick an earlier prompt", "continue please")
	p.keys("Down", "Down", "Enter")
	p.waitFor("rewinding to turn 1")
	p.keys("C-u") // the composer's delete-to-line-start
	p.submit("tell me about bananas")
	s = p.waitFor("Forked answer about bananas.", "rewound: a new session forked", "ready")
	if strings.Contains(s, "forty-two") || strings.Contains(s, "Continued answer.") {
		t.Errorf("the fork shows turns after the rewind point:\n%s", s)
	}
	if got := lastUserTexts(fake); len(got) != 1 || got[0] != "tell me about bananas" {
		t.Errorf("the fork sent the user messages %q; want only the edited prompt", got)
	}
	p.quit()

	// --resume without an id: the picker lists both sessions.
	p = run("--resume")
	s = p.waitFor("Sessions in", "tell me about bananas", "what do the notes say?", "enter open")
	if !strings.Contains(s, "3 turns") {
		t.Errorf("the picker does not show the original's size:\n%s", s)
	}
	// Newest first: the fork, then the original; open the original.
	p.keys("Down", "Enter")
	p.waitFor("Continued answer.", "forty-two", "ready")
	p.quit()
}

// lastUserTexts are the user messages of the fake model's last request.
func lastUserTexts(fake *modeltest.Server) []string {
	reqs := fake.Requests()
	var out []string
	for _, it := range reqs[len(reqs)-1].InputItems() {
		if it["role"] == "user" {
			if s, ok := it["content"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// writeFile writes text to dir/name, making the folders it needs.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	testutil.WriteFile(t, filepath.Join(dir, name), text)
}

// readFile is the text of dir/name ("" when it cannot be read).
func readFile(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}

// scriptNotesRewrite puts notes.txt ("old notes") in ws and scripts the
// model's first answer: call c1, a write replacing it with "new notes".
func scriptNotesRewrite(t *testing.T, ws string, fake *modeltest.Server) {
	t.Helper()
	writeFile(t, ws, "notes.txt", "old notes\n")
	fake.Script(modeltest.ToolCall("c1", "write", `{"path":"notes.txt","mode":"replace","content":"new notes\n"}`))
}
