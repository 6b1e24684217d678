package tui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestReconnectAfterDaemonRestart: `scv stop` ends the daemon under a
// running TUI, which keeps its transcript and reconnects once `scv run`
// is back; the prompt typed then continues the same stored session (the
// model gets both turns) and the transcript is redrawn.
func TestReconnectAfterDaemonRestart(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("First answer about apples."))
	fake.Script(modeltest.Text("Second answer about pears."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.submit("tell me about apples")
	p.waitFor("First answer about apples.", "ready")

	stopDaemon(t, scv, home)
	p.waitFor("daemon disconnected, reconnecting…", "● reconnecting…", "First answer about apples.")
	startDaemon(t, scv, home)
	p.waitFor("reconnected to the daemon", "Enter continues this session", "● connected")
	p.submit("and pears?")
	s := p.waitFor("Second answer about pears.", "ready")
	if !strings.Contains(s, "› tell me about apples") {
		t.Errorf("the resumed session's earlier turn is not redrawn:\n%s", s)
	}
	if got := lastUserTexts(fake); len(got) != 2 || got[0] != "tell me about apples" || got[1] != "and pears?" {
		t.Errorf("the turn after reconnecting sent the user messages %q; want both turns of the session", got)
	}
	p.quit()
}

// wheel sends n SGR mouse-wheel reports (up or down) at a cell of the
// transcript, as a terminal does when the application asked for mouse
// reports.
func (p *pane) wheel(up bool, n int) {
	code := "65"
	if up {
		code = "64"
	}
	seq := "\x1b[<" + code + ";10;6M"
	var hex []string
	for range n {
		for _, b := range []byte(seq) {
			hex = append(hex, fmt.Sprintf("%02x", b))
		}
	}
	p.tmux(append([]string{"send-keys", "-t", "e2e", "-H"}, hex...)...)
}

// TestMouseWheelUnderTmux: the wheel scrolls a long answer up and back
// down in a real terminal.
func TestMouseWheelUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		b.WriteString("answer line " + string(rune('A'+i/26)) + string(rune('a'+i%26)) + "\n\n")
	}
	b.WriteString("THE LAST LINE")
	fake := modeltest.New(t)
	fake.Script(modeltest.Text(b.String()))
	p := openTUI(t, scv, home, ws, fake, 80, 20)
	p.submit("a long answer please")
	p.waitFor("THE LAST LINE", "ready")
	p.wheel(true, 5)
	s := p.waitFor("↑15 lines")
	if strings.Contains(s, "THE LAST LINE") {
		t.Errorf("scrolled up, the last line is still shown:\n%s", s)
	}
	p.wheel(false, 5)
	s = p.waitFor("THE LAST LINE")
	if strings.Contains(s, "↑") {
		t.Errorf("scrolled back down, the status line still says scrolled:\n%s", s)
	}
	p.quit()
}

// TestModelAndUndoUnderTmux: /model NAME switches the model of the next
// request; /undo shows the write of the last turn, y restores the file.
func TestModelAndUndoUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	scriptNotesRewrite(t, ws, fake)
	fake.Script(modeltest.Text("Notes rewritten."))
	p := openTUI(t, scv, home, ws, fake, 100, 40)

	p.submit("/model other-model")
	time.Sleep(300 * time.Millisecond)
	p.waitFor("model: other-model", "scv │ other-model │")

	p.submit("rewrite the notes")
	p.answerApproval("y", "notes.txt")
	p.waitFor("Notes rewritten.", "ready")
	reqs := fake.Requests()
	if got := reqs[len(reqs)-1].Body["model"]; got != "other-model" {
		t.Errorf("the request after /model used model %v, want other-model", got)
	}
	if got := readFile(ws, "notes.txt"); got != "new notes\n" {
		t.Fatalf("the write did not happen: %q", got)
	}

	p.submit("/undo")
	p.waitFor("Undo the last turn?", "restore notes.txt", "-new notes", "+old notes", "y undo")
	p.keys("y")
	p.waitFor("undone: 1 file", "restored notes.txt")
	if got := readFile(ws, "notes.txt"); got != "old notes\n" {
		t.Errorf("after /undo notes.txt holds %q, want the old notes", got)
	}
	p.quit()
}

// TestRefusedCommandNeverSentUnderTmux: an unknown /word is refused and
// stays selected, so the next command typed replaces it: "/zap" then
// "/frobnicate" are both refused and the model never gets a request for
// either; the prompt typed after them is the only one it gets.
func TestRefusedCommandNeverSentUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("Plain answer."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.submit("/zap")
	p.waitFor("unknown command /zap (nothing was sent)")
	p.submit("/frobnicate")
	s := p.waitFor("unknown command /frobnicate (nothing was sent)")
	if strings.Contains(s, "/zap/frobnicate") {
		t.Errorf("the second command was appended to the first:\n%s", s)
	}
	time.Sleep(300 * time.Millisecond) // room for a request that must not come
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the model got %d requests for refused commands; the last: %v", n, lastUserTexts(fake))
	}
	p.submit("a real prompt")
	p.waitFor("Plain answer.", "ready")
	if got := lastUserTexts(fake); len(got) != 1 || got[0] != "a real prompt" {
		t.Errorf("the model got the user messages %q; want only the prompt", got)
	}
	p.quit()
}
