package tui_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestSelectAndHintsUnderTmux: in the real binary, a write's diff stays
// reachable after a later call (Alt+Up selects the answer, the later call,
// then the write, and Ctrl+O shows its diff), and while a turn runs the status line says Ctrl+C
// cancels it, which it does without quitting.
func TestSelectAndHintsUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	scriptNotesRewrite(t, ws, fake)
	fake.Script(modeltest.ToolCall("c2", "bash", `{"command":"echo later-call"}`))
	fake.Script(modeltest.Text("Wrote and echoed."))
	fake.Script(modeltest.ToolCall("c3", "bash", `{"command":"sleep 30"}`))
	p := openTUI(t, scv, home, ws, fake, 100, 40)
	p.submit("rewrite the notes")
	p.answerApproval("y", "notes.txt")
	p.answerApproval("y", "command: echo later-call")
	s := p.waitFor("Wrote and echoed.", "ready")
	if !strings.Contains(s, "± notes.txt +1 −1 · select with alt+↑/↓, then ctrl+o to show the diff") {
		t.Fatalf("the write's hint does not say how to reach its diff after a later call:\n%s", s)
	}
	if got := readFile(ws, "notes.txt"); got != "new notes\n" {
		t.Fatalf("the write did not happen: %q", got)
	}
	p.keys("M-Up")
	p.waitFor("▸ Wrote and echoed.", "y copy · alt+↑/↓ select")
	p.keys("M-Up")
	p.waitFor("▸ ● bash echo later-call [done]")
	p.keys("M-Up")
	p.waitFor("▸ ● write notes.txt [done]", "ctrl+o expand · y copy · alt+↑/↓ select")
	p.keys("C-o")
	p.waitFor("-old notes", "+new notes", "(ctrl+o to collapse)")

	p.submit("now sleep")
	p.answerApproval("y", "sleep 30")
	s = p.waitFor("bash sleep 30 [running]", "esc/ctrl+c cancel the turn")
	if strings.Contains(s, "ctrl+c quit") {
		t.Errorf("the status line says ctrl+c quits while a turn runs:\n%s", s)
	}
	p.keys("C-c")
	s = p.waitFor("bash sleep 30 [cancelled]", "turn cancelled", "ready", "ctrl+c quit")
	if strings.Contains(s, "pane-script-finished") {
		t.Fatalf("ctrl+c during the turn quit the TUI:\n%s", s)
	}
	p.quit()
}
