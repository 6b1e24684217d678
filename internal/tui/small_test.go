package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// TestApprovalIn50x12: in a 50×12 window the approval panel shrinks so
// the composer, the keys that answer it and the status line stay on
// screen; its summary and diff scroll with ↑/↓ and every line can be
// reached.
func TestApprovalIn50x12(t *testing.T) {
	small := func(c *Config) { c.Width, c.Height = 50, 12 }
	var steps []string
	for i := 1; i <= 12; i++ {
		steps = append(steps, fmt.Sprintf("go test ./pkg%02d/...", i))
	}
	command := strings.Join(steps, " && \\\n  ")

	h := newHarness(t, small)
	h.bashFlow(command)
	h.golden("approval_bash_50x12")
	checkAnswerable(t, h)
	seen := map[string]bool{}
	for range 30 {
		for _, l := range strings.Split(h.frame(), "\n") {
			seen[strings.Trim(l, "│ &\\")] = true
		}
		h.keys(down)
	}
	for i := 1; i <= 12; i++ {
		if w := fmt.Sprintf("go test ./pkg%02d/...", i); !seen[w] {
			t.Errorf("command line %q never shown while scrolling", w)
		}
	}
	checkAnswerable(t, h)

	h = newHarness(t, small)
	h.writeFlow()
	h.golden("approval_write_50x12")
	checkAnswerable(t, h)
	// It opened at the first changed line; the summary and the file
	// headers above it are reached with ↑.
	if f := h.frame(); !strings.Contains(f, `-    println("hi")`) || strings.Contains(f, "replace main.go") {
		t.Errorf("the compact diff panel did not open at the first changed line:\n%s", f)
	}
	for range 10 {
		h.keys(up)
	}
	if f := h.frame(); !strings.Contains(f, "replace main.go (61 bytes)") || !strings.Contains(f, "1–2/11") {
		t.Errorf("↑ does not reach the summary above the change:\n%s", f)
	}
	h.keys(down, down, down, down, down, down, down)
	if f := h.frame(); !strings.Contains(f, "8–9/11") {
		t.Errorf("scrolling back down does not return to the change:\n%s", f)
	}
	h.keys(key('r'))
	h.typeText("no")
	if f := h.frame(); !strings.Contains(f, "› no█") || !strings.Contains(f, "enter deny") {
		t.Errorf("the reason editor is not on screen at 50×12:\n%s", f)
	}
}

// checkAnswerable fails unless the frame fills the window exactly and
// shows the y/n keys, the composer and the status line.
func checkAnswerable(t *testing.T, h *harness) {
	t.Helper()
	f := h.frame()
	lines := strings.Split(strings.TrimSuffix(f, "\n"), "\n")
	if len(lines) != h.m.height {
		t.Fatalf("frame has %d lines, want %d:\n%s", len(lines), h.m.height, f)
	}
	if !strings.Contains(f, "y/n") {
		t.Errorf("the y/n keys are not shown:\n%s", f)
	}
	if !strings.HasPrefix(lines[len(lines)-2], "> ") || !strings.Contains(lines[len(lines)-1], "awaiting approval") {
		t.Errorf("the composer and the status line are not the last two lines:\n%s", f)
	}
}

// TestCancelledTurnMarked: a cancelled turn says the model did not see
// its output.
func TestCancelledTurnMarked(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("long job", "t1")
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "Working on it"},
		&proto.TurnCancelled{TurnHeader: th("t1")})
	if f := h.frame(); !strings.Contains(f, "turn cancelled — kept in the model's context as interrupted") {
		t.Errorf("the cancelled turn is not marked:\n%s", f)
	}
}

// TestMouseWheelScrolls: the wheel scrolls the transcript up and back
// down, and the frame asks the terminal for mouse reports.
func TestMouseWheelScrolls(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 60 {
		h.m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("note %02d", i)})
	}
	if v := h.m.View(); v.MouseMode != tea.MouseModeCellMotion {
		t.Errorf("mouse mode = %v, want cell motion (wheel reports)", v.MouseMode)
	}
	if !strings.Contains(h.frame(), "note 59") {
		t.Fatalf("the bottom is not shown:\n%s", h.frame())
	}
	for range 10 {
		h.m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	f := h.frame()
	if strings.Contains(f, "note 59") || !strings.Contains(f, "↑30 lines") {
		t.Errorf("ten notches up did not scroll 30 lines:\n%s", f)
	}
	for range 10 {
		h.m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if f := h.frame(); !strings.Contains(f, "note 59") || h.m.scroll != 0 {
		t.Errorf("scrolling down did not return to the bottom:\n%s", f)
	}
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("scrolling sent %v", got)
	}
}
