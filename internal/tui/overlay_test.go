package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// TestOverlayStackOrder: the stack, top first, for the states that put
// several overlays on it: an approval being typed into is above
// everything, a waiting one below the popups of the composer.
func TestOverlayStackOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(m *Model)
		want  []string
	}{
		{"idle", func(*Model) {}, []string{"planOverlay"}},
		{"slash menu", func(m *Model) { m.composer.SetValue("/co") }, []string{"planOverlay", "slashOverlay"}},
		{"waiting approval", func(m *Model) { m.approval = &approvalReq{} }, []string{"planOverlay", "approvalOverlay"}},
		{"picker over a waiting approval", func(m *Model) {
			m.approval, m.picker = &approvalReq{}, &picker{}
		}, []string{"pickerOverlay", "planOverlay", "approvalOverlay"}},
		{"reason typed under a picker and an undo", func(m *Model) {
			m.approval = &approvalReq{mode: modeReason}
			m.picker, m.undo = &picker{}, &undoPanel{ev: &proto.SessionUndone{}}
		}, []string{"approvalOverlay", "pickerOverlay", "undoOverlay", "planOverlay"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			tc.setup(h.m)
			var got []string
			for _, o := range h.m.overlays() {
				got = append(got, fmt.Sprintf("%T", o)[len("tui."):])
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("stack (-want +got):\n%s", d)
			}
		})
	}
}

// TestTopOverlayTakesKeys: with the picker opened over a waiting
// approval, y filters the picker and answers nothing; once the picker is
// closed, y approves.
func TestTopOverlayTakesKeys(t *testing.T) {
	h := newHarness(t, nil)
	h.bashFlow("go test ./...")
	h.keys(ctrlP)
	if h.m.picker == nil {
		t.Fatal("Ctrl+P did not open the picker over the approval")
	}
	h.rec.take() // session.list
	h.keys(key('y'))
	if got := h.rec.take(); len(got) != 0 || h.m.picker.filter != "y" || h.m.approval == nil {
		t.Fatalf("y under the picker sent %v (filter %q, approval %v)", got, h.m.picker.filter, h.m.approval != nil)
	}
	h.keys(esc, esc)
	if h.m.picker != nil {
		t.Fatal("two Esc did not close the picker")
	}
	h.keys(key('y'))
	got := h.rec.take()
	if len(got) != 1 {
		t.Fatalf("y on the approval sent %d messages, want 1: %v", len(got), got)
	}
	r, ok := got[0].(*proto.ApprovalResolve)
	if !ok || !r.Approved || r.ApprovalID != "a1" {
		t.Errorf("y sent %+v, want the approval of a1", got[0])
	}
}

// TestWheelAndPasteFollowTheStack: the wheel moves the undo panel, not
// the transcript, while it is shown; text pasted while a reason is typed
// goes into the reason, not the composer.
func TestWheelAndPasteFollowTheStack(t *testing.T) {
	h := newHarness(t, nil)
	h.m.undo = &undoPanel{ev: &proto.SessionUndone{Files: []proto.UndoFile{{Path: "a.go"}}}}
	h.m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if h.m.undo.scroll != wheelLines || h.m.scroll != 0 {
		t.Errorf("wheel under the undo panel: panel scroll %d, transcript scroll %d", h.m.undo.scroll, h.m.scroll)
	}
	h.m.undo = nil
	h.bashFlow("go test ./...")
	h.keys(key('r'))
	h.m.Update(tea.PasteMsg{Content: "flaky\ttest"})
	if h.m.approval.input != "flaky test" || h.m.composer.Value() != "" {
		t.Errorf("paste while a reason is typed: reason %q, composer %q", h.m.approval.input, h.m.composer.Value())
	}
}
