package tui_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestResumeShowsGrantAndUndoUnderTmux: with the real daemon, "a" on a
// write (allow for this session) and /undo afterwards leave their notes
// in the transcript; `scv --continue` shows both again, as they were
// shown live.
func TestResumeShowsGrantAndUndoUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	scriptNotesRewrite(t, ws, fake)
	fake.Script(modeltest.Text("Notes rewritten."))
	p := openTUI(t, scv, home, ws, fake, 100, 40)
	p.submit("rewrite the notes")
	p.answerApproval("a", "a allow writes anywhere in the workspace for this session")
	p.waitFor("allow for this session the writes under")
	p.keys("Enter")
	p.waitFor("Notes rewritten.", "ready")
	p.submit("/undo")
	p.waitFor("Undo the last turn?", "y undo")
	p.keys("y")
	live := p.waitFor("undone: 1 file", "restored notes.txt")
	if got := readFile(ws, "notes.txt"); got != "old notes\n" {
		t.Fatalf("the undo did not restore the file: %q", got)
	}
	notes := []string{"allowed for this session: write calls anywhere in the workspace", "undone: 1 file of the last turn", "restored notes.txt"}
	for _, n := range notes {
		if !strings.Contains(live, n) {
			t.Fatalf("the live screen lacks %q:\n%s", n, live)
		}
	}
	p.quit()

	p = startSCV(t, 100, 40, scv, home, ws, "--continue")
	s := p.waitFor("Notes rewritten.", "ready")
	for _, n := range notes {
		if !strings.Contains(s, n) {
			t.Errorf("the resumed screen lacks %q:\n%s", n, s)
		}
	}
	if strings.Index(s, "undone: 1 file") < strings.Index(s, "Notes rewritten.") {
		t.Errorf("the undo note is not after the turn it undid:\n%s", s)
	}
	p.quit()
}
