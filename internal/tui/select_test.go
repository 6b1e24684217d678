package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

var (
	altUp   = tea.KeyPressMsg{Code: tea.KeyUp, Mod: tea.ModAlt}
	altDown = tea.KeyPressMsg{Code: tea.KeyDown, Mod: tea.ModAlt}
)

// TestSelectEarlierRowAndExpand: after a write, a later call with output
// becomes what Ctrl+O expands; the write's hint says how to reach its diff
// (select it with Alt+Up, then Ctrl+O), and doing so shows the diff.
// Alt+Down past the last row ends the selection.
func TestSelectEarlierRowAndExpand(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 40 })
	h.writeFlow()
	h.keys(key('y'))
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "write"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Success: true, Output: `{"path":"main.go","bytes":61,"sha256":"x"}`},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c2", Name: "read", Arguments: args(map[string]any{"path": "go.mod"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c2", Name: "read"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c2", Name: "read", Success: true, Output: "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"},
		&proto.TurnCompleted{TurnHeader: th("t1")})
	f := h.frame()
	if !strings.Contains(f, "± main.go +2 −1 · select with alt+↑/↓, then ctrl+o to show the diff") {
		t.Fatalf("the write's hint does not say how to reach its diff:\n%s", f)
	}
	if !strings.Contains(f, "… 2 more lines (ctrl+o to expand)") {
		t.Fatalf("the latest output's hint is not plain ctrl+o:\n%s", f)
	}
	h.keys(ctrlO)
	if f := h.frame(); !strings.Contains(f, "l8") || strings.Contains(f, `+    println("hello")`) {
		t.Fatalf("ctrl+o did not expand the latest output alone:\n%s", f)
	}
	h.keys(ctrlO) // collapse again
	h.keys(altUp)
	if f := h.frame(); !strings.Contains(f, "▸ ● read go.mod [done]") || !strings.Contains(f, "ctrl+o expand · y copy · alt+↑/↓ select") {
		t.Fatalf("the first alt+up does not select the latest row, or the status line does not say so:\n%s", f)
	}
	h.keys(altUp)
	f = h.frame()
	if !strings.Contains(f, "▸ ● write main.go [done]") || !strings.Contains(f, "± main.go +2 −1 · ctrl+o to show the diff") {
		t.Fatalf("the second alt+up does not select the write:\n%s", f)
	}
	h.keys(ctrlO)
	f = h.frame()
	assertContains(t, "the frame after ctrl+o on the selected write", f, `+    println("hello")`, `-    println("hi")`, "(ctrl+o to collapse)")
	if strings.Contains(f, "l8") {
		t.Errorf("the read's output is expanded too:\n%s", f)
	}
	h.keys(altDown, altDown)
	f = h.frame()
	if strings.Contains(f, "▸ ") || strings.Contains(f, "alt+↑/↓ select") {
		t.Errorf("alt+down past the last row left a selection:\n%s", f)
	}
	if len(h.rec.take()) != 1 { // the approval answer only
		t.Error("selecting and expanding sent messages")
	}
}

// TestSelectedRowScrolledIntoView: selecting a row above the window
// scrolls it into view.
func TestSelectedRowScrolledIntoView(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 12 })
	h.prompt("go", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "read", Arguments: args(map[string]any{"path": "first.txt"})},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "read", Success: true, Output: "first output"},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: strings.Repeat("filler paragraph\n\n", 20)},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c2", Name: "read", Arguments: args(map[string]any{"path": "second.txt"})},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c2", Name: "read", Success: true, Output: "second output"},
		&proto.TurnCompleted{TurnHeader: th("t1")})
	if f := h.frame(); strings.Contains(f, "first.txt") {
		t.Fatalf("the window is too tall for the test:\n%s", f)
	}
	h.keys(altUp, altUp) // the second read, then the answer between them
	if f := h.frame(); !strings.Contains(f, "▸ filler paragraph") || !strings.Contains(f, "y copy · alt+↑/↓ select") || strings.Contains(f, "ctrl+o expand ·") {
		t.Errorf("the answer is not selectable, or the hint offers ctrl+o for it:\n%s", f)
	}
	h.keys(altUp)
	if f := h.frame(); !strings.Contains(f, "▸ ● read first.txt [done]") || !strings.Contains(f, "first output") {
		t.Errorf("the selected row is not scrolled into view:\n%s", f)
	}
}

// TestHintsTellTheTruth: the status line names what Ctrl+C does in each
// state (clear, cancel the turn, quit), and each claim holds.
func TestHintsTellTheTruth(t *testing.T) {
	h := newHarness(t, nil)
	status := func() string {
		lines := strings.Split(strings.TrimRight(h.frame(), "\n"), "\n")
		return lines[len(lines)-1]
	}
	if s := status(); !strings.Contains(s, "ctrl+c quit") {
		t.Errorf("idle and empty: %q", s)
	}
	h.prompt("long job", "t1")
	if s := status(); !strings.Contains(s, "esc/ctrl+c cancel the turn") || strings.Contains(s, "quit") {
		t.Errorf("while a turn runs the status line says %q", s)
	}
	h.typeText("next")
	if s := status(); !strings.Contains(s, "ctrl+c clear") {
		t.Errorf("a turn runs and the composer has text: %q", s)
	}
	h.keys(ctrlC)
	if got := h.m.composer.Value(); got != "" {
		t.Fatalf("ctrl+c did not clear: %q", got)
	}
	h.rec.take()
	h.keys(ctrlC)
	if got := h.rec.take(); len(got) != 1 {
		t.Fatalf("ctrl+c while the turn runs sent %v, want one turn.cancel", got)
	} else if _, ok := got[0].(*proto.TurnCancel); !ok {
		t.Fatalf("ctrl+c while the turn runs sent %T, want turn.cancel", got[0])
	}
	if h.m.quitting {
		t.Fatal("ctrl+c quit while the hint said it cancels the turn")
	}
}

// TestPickerTypeToFilter: typing in the session picker filters it by the
// titles' characters in order, case folded; the count is shown, Enter
// opens the match under the cursor, Backspace edits the filter and the
// first Esc clears it (the second closes the picker).
func TestPickerTypeToFilter(t *testing.T) {
	h := newHarness(t, nil)
	h.keys(ctrlP)
	h.rec.take()
	h.ev(req("tui-1", &proto.SessionListed{Sessions: []proto.StoredSession{
		{SessionID: "s2", Title: "Release notes for 0.4", Cwd: "/w"},
		{SessionID: "s3", Title: "Fix the flaky test", Cwd: "/w"},
		{SessionID: "s4", Title: "Refactor the store", Cwd: "/w"},
		{SessionID: "s5", Title: "Renamed", FirstPrompt: "why does the migration hang?", Cwd: "/w"},
	}}))
	h.typeText("migration")
	if f := h.frame(); !strings.Contains(f, "▸ Renamed") || !strings.Contains(f, "(1 of 4)") {
		t.Fatalf("a renamed session is not found by its first prompt:\n%s", f)
	}
	h.keys(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	h.typeText("FXtst")
	f := h.frame()
	if !strings.Contains(f, "filter: FXtst (1 of 4)") || !strings.Contains(f, "▸ Fix the flaky test") || strings.Contains(f, "Release notes") {
		t.Fatalf("the filter does not keep only the fuzzy match:\n%s", f)
	}
	h.keys(tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	if f := h.frame(); !strings.Contains(f, "filter: F (3 of 4)") || !strings.Contains(f, "Release notes") {
		t.Fatalf("backspace does not widen the filter:\n%s", f)
	}
	h.typeText("zzz")
	if f := h.frame(); !strings.Contains(f, "nothing matches") {
		t.Fatalf("an empty result is not explained:\n%s", f)
	}
	h.keys(esc)
	if h.m.picker == nil || strings.Contains(h.frame(), "filter:") || !strings.Contains(h.frame(), "Release notes") {
		t.Fatalf("the first Esc did not clear the filter (or closed the picker):\n%s", h.frame())
	}
	h.submit("store")
	got := h.rec.take()
	if len(got) != 1 {
		t.Fatalf("Enter on the filtered row sent %v", got)
	}
	if r, ok := got[0].(*proto.SessionResume); !ok || r.SessionID != "s4" {
		t.Errorf("Enter on the filtered row sent %+v, want session.resume of s4", got[0])
	}
	h.keys(esc, esc) // clears the filter, then closes
	if h.m.picker != nil {
		t.Error("Esc with no filter did not close the picker")
	}
}

// TestPickerShowsFailedOnAsk: the picker asks for the sessions that
// failed before any answer only after Ctrl+A, and says which way the key
// goes.
func TestPickerShowsFailedOnAsk(t *testing.T) {
	h := newHarness(t, nil)
	h.keys(ctrlP)
	if got := h.rec.take(); len(got) != 1 || got[0].(*proto.SessionList).All {
		t.Fatalf("the picker's first list asks for the failed sessions too: %+v", got)
	}
	h.keys(tea.KeyPressMsg{Code: 'a', Mod: tea.ModCtrl})
	got := h.rec.take()
	if len(got) != 1 || !got[0].(*proto.SessionList).All {
		t.Fatalf("ctrl+a sent %+v, want a list with all", got)
	}
	if f := h.frame(); !strings.Contains(f, "ctrl+a hide failed") {
		t.Errorf("the hint does not offer to hide them again:\n%s", f)
	}
}

// TestCopySelected: y copies the selected answer or tool output through
// OSC 52; with text in the composer y is typed instead.
func TestCopySelected(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("go", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "ls"})},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: true, Output: `{"exit_code":0,"timed_out":false,"output":"a.txt\nb.txt\n","truncated":false}`},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Two **files**."},
		&proto.TurnCompleted{TurnHeader: th("t1")})
	h.keys(altUp)
	if got := sent(h.keys(key('y'))); len(got) != 1 || got[0] != "clipboard:Two **files**." {
		t.Errorf("y on the selected answer sent %q", got)
	}
	h.keys(altUp)
	if got := sent(h.keys(key('y'))); len(got) != 1 || got[0] != "clipboard:a.txt\nb.txt\n" {
		t.Errorf("y on the selected bash row sent %q", got)
	}
	if !strings.Contains(h.frame(), "copied the output of bash") {
		t.Errorf("no notice of the copy:\n%s", h.frame())
	}
	h.typeText("x")
	if got := sent(h.keys(key('y'))); len(got) != 0 || h.m.composer.Value() != "xy" {
		t.Errorf("y with text in the composer sent %q and left %q", got, h.m.composer.Value())
	}
}
