package tui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// sent runs cmd and every command it batches, and returns the messages
// that reach the terminal: raw escape sequences and clipboard writes.
func sent(cmd tea.Cmd) []string {
	if cmd == nil {
		return nil
	}
	var out []string
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			out = append(out, sent(c)...)
		}
	case tea.RawMsg:
		out = append(out, fmt.Sprint(msg.Msg))
	default:
		if v := reflect.ValueOf(msg); v.Kind() == reflect.String && strings.Contains(v.Type().Name(), "lipboard") {
			out = append(out, "clipboard:"+v.String())
		}
	}
	return out
}

// TestNotifications: a turn's end and a waiting approval ring the bell
// when the terminal is unfocused, or once they took NotifyAfter; a short
// turn in a focused terminal rings nothing; osc9 sends a notification
// with text; off sends nothing.
func TestNotifications(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NotifyAfter = 5 * time.Second })
	if !h.m.View().ReportFocus {
		t.Fatal("the TUI does not ask for focus reports")
	}
	h.prompt("quick", "t1")
	if got := sent(h.m.handleEvent(&proto.TurnCompleted{TurnHeader: th("t1")})); len(got) != 0 {
		t.Errorf("a short turn in a focused terminal sent %q", got)
	}
	h.prompt("slow", "t2")
	h.clk.t = h.clk.t.Add(6 * time.Second)
	if got := sent(h.m.handleEvent(&proto.TurnCompleted{TurnHeader: th("t2")})); len(got) != 1 || got[0] != "\a" {
		t.Errorf("a turn of 6 s sent %q, want the bell", got)
	}
	h.m.Update(tea.BlurMsg{})
	h.prompt("while away", "t3")
	if got := sent(h.m.handleEvent(&proto.TurnCompleted{TurnHeader: th("t3")})); len(got) != 1 || got[0] != "\a" {
		t.Errorf("a turn ending while unfocused sent %q, want the bell", got)
	}
	h.m.Update(tea.FocusMsg{})
	h.prompt("needs approval", "t4")
	ask := &proto.ApprovalRequested{TurnHeader: th("t4"), ApprovalID: "a1", CallID: "c1", Name: "bash", Risk: "process", Summary: "ls"}
	if got := sent(h.m.handleEvent(ask)); len(got) != 0 {
		t.Errorf("an approval in a focused terminal rang at once: %q", got)
	}
	h.clk.t = h.clk.t.Add(2 * time.Second)
	_, cmd := h.m.Update(tickMsg{})
	if got := sent(cmd); len(got) != 0 {
		t.Errorf("an approval waiting 2 s rang: %q", got)
	}
	h.clk.t = h.clk.t.Add(4 * time.Second)
	_, cmd = h.m.Update(tickMsg{})
	if got := sent(cmd); len(got) != 1 || got[0] != "\a" {
		t.Errorf("an approval waiting 6 s sent %q, want the bell", got)
	}
	_, cmd = h.m.Update(tickMsg{})
	if got := sent(cmd); len(got) != 0 {
		t.Errorf("the approval rang twice: %q", got)
	}

	osc := newHarness(t, func(c *Config) { c.Notify = NotifyOSC9 })
	osc.m.Update(tea.BlurMsg{})
	osc.prompt("x", "t1")
	if got := sent(osc.m.handleEvent(&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "bash\x1b]0;evil\a", Risk: "process"})); len(got) != 1 || !strings.HasPrefix(got[0], "\x1b]9;scv: approval needed: bash") || strings.Count(got[0], "\x07") != 1 || strings.Count(got[0], "\x1b") != 1 {
		t.Errorf("osc9 sent %q, want one OSC 9 with the text made safe", got)
	}

	off := newHarness(t, func(c *Config) { c.Notify = NotifyOff })
	off.m.Update(tea.BlurMsg{})
	off.prompt("x", "t1")
	if got := sent(off.m.handleEvent(&proto.TurnCompleted{TurnHeader: th("t1")})); len(got) != 0 || off.m.View().ReportFocus {
		t.Errorf("notify off sent %q (focus reports %v)", got, off.m.View().ReportFocus)
	}
}

// TestCopyCommand: /copy puts the last answer on the clipboard through
// OSC 52, /copy code its last code block; with nothing to copy it says
// so.
func TestCopyCommand(t *testing.T) {
	h := newHarness(t, nil)
	if got := sent(h.submit("/copy")); len(got) != 0 || !strings.Contains(h.frame(), "nothing to copy") {
		t.Fatalf("/copy with no answer sent %q:\n%s", got, h.frame())
	}
	h.prompt("show code", "t1")
	answer := "Run this:\n\n```sh\ngo test ./...\n```\n\nor this:\n\n~~~\nmake check\n~~~\n"
	h.ev(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: answer}, &proto.TurnCompleted{TurnHeader: th("t1")})
	if got := sent(h.submit("/copy")); len(got) != 1 || got[0] != "clipboard:"+answer {
		t.Errorf("/copy sent %q, want the answer on the clipboard", got)
	}
	if got := sent(h.submit("/copy code")); len(got) != 1 || got[0] != "clipboard:make check\n" {
		t.Errorf("/copy code sent %q, want the last code block", got)
	}
	if !strings.Contains(h.frame(), "copied the last code block") {
		t.Errorf("no notice of the copy:\n%s", h.frame())
	}
}
