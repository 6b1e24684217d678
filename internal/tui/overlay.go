package tui

import tea "charm.land/bubbletea/v2"

// Overlays (docs/tui.md, "How the TUI is built"): the panels and popups
// shown over the transcript and the composer, each a type with its own
// keys and view. A key goes to the overlays top first; the first that
// handles it ends its journey, and a key none handles goes to the global
// keys, then to the composer (handleKey).

// overlay is one panel or popup with keys of its own.
type overlay interface {
	// update handles a key press; handled false passes it to the layer
	// below. cmd is what the key asks of the program (nil for most).
	update(m *Model, k tea.KeyPressMsg) (handled bool, cmd tea.Cmd)
	// view is the overlay's lines at the window's size.
	view(m *Model) []string
}

// wheelTaker is an overlay the mouse wheel moves (the picker's cursor,
// the undo panel's lines); the wheel scrolls the transcript when no
// overlay on the stack takes it.
type wheelTaker interface {
	wheel(m *Model, up bool)
}

// pasteTaker is an overlay that takes pasted text; false leaves it to the
// composer (an image's path attaches the image).
type pasteTaker interface {
	paste(m *Model, text string) bool
}

// overlays is the stack of the overlays shown, the top (the first to get
// a key) first. It is derived from the state each overlay keeps (the
// approval, the picker, the undo panel, the plan state, the composer's
// text for the two popups), so it cannot disagree with what an event or
// a command opened or closed:
//
//   - an approval whose prefix or reason is typed holds every key;
//   - the picker and the undo panel hold every key while open;
//   - the plan view (todo list, accept offer) takes Shift+Tab and
//     Ctrl+T, and every key while the offer is shown;
//   - the @-completion and the slash menu take the keys that move in
//     them or complete;
//   - an approval waiting for its answer takes y, n, a, s, r and the
//     arrows that scroll it, below the popups above the composer.
func (m *Model) overlays() []overlay {
	var stack []overlay
	editing := m.approval != nil && m.approval.mode != modeChoose
	if editing {
		stack = append(stack, approvalOverlay{})
	}
	if m.picker != nil {
		stack = append(stack, pickerOverlay{})
	}
	if m.undo != nil {
		stack = append(stack, undoOverlay{})
	}
	stack = append(stack, planOverlay{})
	if m.mentionOpen() {
		stack = append(stack, mentionOverlay{})
	}
	if len(m.menuItems()) > 0 {
		stack = append(stack, slashOverlay{})
	}
	if m.approval != nil && !editing {
		stack = append(stack, approvalOverlay{})
	}
	return stack
}

// browsingHistory says k walks the prompt history: while it is browsed,
// Up/Down keep walking it even when the recalled text opens a popup.
func (m *Model) browsingHistory(k tea.KeyPressMsg) bool {
	s := k.String()
	return m.histIdx < len(m.history) && (s == "up" || s == "down")
}
