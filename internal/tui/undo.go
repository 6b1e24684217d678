package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
)

// /undo (docs/tui.md): a dry run first (session.undo with dry_run), whose
// files and diffs are shown in a panel with the note on what undo does not
// cover; y sends the undo itself.

// undoPanel is the confirmation of an undo: the dry run's answer, laid
// out per width, and the first scrolled line shown.
type undoPanel struct {
	ev     *proto.SessionUndone
	width  int
	lines  []string
	scroll int
}

// undoCommand asks the server what undoing the last turn would change.
func (m *Model) undoCommand() {
	if m.refuseUnlessIdle("/undo", "not connected; nothing can be undone") {
		return
	}
	id := m.nextRequestID()
	if m.sendMsg(&proto.SessionUndo{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID, DryRun: true}) {
		m.undoReq = id
	}
}

// undone shows a session.undone answer: the dry run as the confirmation
// panel, the undo itself as a notice.
func (m *Model) undone(e *proto.SessionUndone) {
	if e.RequestID == "" || e.RequestID != m.undoReq {
		return
	}
	m.undoReq = ""
	note := ""
	if e.Note != "" {
		note = "\n" + e.Note
	}
	if e.DryRun {
		if len(e.Files) == 0 {
			m.addItem(&item{kind: kindNotice, text: "nothing to undo: the last turn wrote no files with the write tool" + note})
			return
		}
		m.undo = &undoPanel{ev: e}
		m.layout()
		return
	}
	m.addItem(&item{kind: kindNotice, text: undoneText(e.Files, e.Note)})
}

// undoneText is the notice of an undo done: live, and on a resume from
// the stored turn.
func undoneText(files []proto.UndoFile, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "undone: %s of the last turn", plural(len(files), "file"))
	for _, f := range files {
		fmt.Fprintf(&b, "\n  %s %s", undoVerb(f.Action, true), f.Path)
	}
	if note != "" {
		b.WriteString("\n" + note)
	}
	return b.String()
}

// undoError shows the refusal of a session.undo.
func (m *Model) undoError(e *proto.Error) bool {
	m.undoReq, m.undo = "", nil
	m.layout()
	if e.Code == proto.ErrUndoRefused {
		m.addItem(&item{kind: kindError, text: "undo refused: " + e.Message})
		return true
	}
	m.addItem(&item{kind: kindError, text: fmt.Sprintf("undo failed (%s): %s", e.Code, e.Message)})
	return true
}

func undoVerb(action string, done bool) string {
	switch {
	case action == "remove" && done:
		return "removed"
	case action == "remove":
		return "remove "
	case done:
		return "restored"
	}
	return "restore"
}

// undoKey handles a key while the undo confirmation is shown.
func (m *Model) undoKey(s string) {
	u := m.undo
	switch s {
	case "y", "Y":
		m.undo = nil
		id := m.nextRequestID()
		if m.sendMsg(&proto.SessionUndo{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID}) {
			m.undoReq = id
		}
	case "n", "N", "esc":
		m.undo = nil
		m.addItem(&item{kind: kindNotice, text: "undo cancelled; no file was changed"})
	case "up", "k":
		u.scroll--
	case "down", "j":
		u.scroll++
	case "pgup":
		u.scroll -= m.undoRows()
	case "pgdown":
		u.scroll += m.undoRows()
	}
	m.layout()
}

// undoScrolled is what the panel scrolls: each file with its diff.
func (m *Model) undoScrolled() []string {
	u := m.undo
	if u.width == m.width && u.lines != nil {
		return u.lines
	}
	st := m.render.styles
	w := max(m.width-4-2, 8)
	paint := newPainter(st)
	u.lines = nil
	for _, f := range u.ev.Files {
		head := undoVerb(f.Action, false) + " " + f.Path
		if f.Diff != nil {
			head += fmt.Sprintf(" +%d −%d", f.Diff.Added, f.Diff.Removed)
		}
		u.lines = append(u.lines, st.bold.Render(ansi.Truncate(head, w+2, "…")))
		if f.Diff == nil {
			continue
		}
		for _, l := range diffLines(f.Diff.Text) {
			l = strings.ReplaceAll(l, "\t", "    ")
			for _, part := range strings.Split(ansi.Wrap(l, w, ""), "\n") {
				u.lines = append(u.lines, "  "+paint.styled(l, part))
			}
		}
		if f.Diff.Omitted > 0 {
			u.lines = append(u.lines, "  "+st.dim.Render(fmt.Sprintf("… +%d more lines", f.Diff.Omitted)))
		}
	}
	u.width = m.width
	return u.lines
}

// undoRows is how many scrolled lines the panel shows at once: what the
// window leaves beside the composer, the status line and a little
// transcript.
func (m *Model) undoRows() int {
	chrome := 2 + 1 + len(m.undoNote()) + 1 // border, title, note, keys
	avail := m.height - (4 + m.composer.Height()) - chrome - 1
	return max(1, min(avail, maxSummaryRows))
}

func (m *Model) undoNote() []string {
	if m.undo.ev.Note == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(m.undo.ev.Note, max(m.width-4, 10), ""), "\n")
}

// undoLines is the confirmation panel; empty when none is shown.
func (m *Model) undoLines() []string {
	u := m.undo
	if u == nil {
		return nil
	}
	st := m.render.styles
	inner := max(m.width-4, 10)
	lines, show := m.undoScrolled(), m.undoRows()
	u.scroll = min(max(u.scroll, 0), max(len(lines)-show, 0))
	title := fmt.Sprintf("Undo the last turn? %s change", plural(len(u.ev.Files), "file"))
	if len(lines) > show {
		title += fmt.Sprintf(" · lines %d–%d of %d", u.scroll+1, u.scroll+show, len(lines))
	}
	rows := []string{st.warn.Render(ansi.Truncate(title, inner, "…"))}
	rows = append(rows, lines[u.scroll:min(u.scroll+show, len(lines))]...)
	for _, l := range m.undoNote() {
		rows = append(rows, st.dim.Render(l))
	}
	keys := "y undo · n keep the files"
	if len(lines) > show {
		keys += " · ↑/↓ scroll"
	}
	rows = append(rows, st.dim.Render(ansi.Truncate(keys, inner, "…")))
	return strings.Split(st.panel.Width(m.width).Render(strings.Join(rows, "\n")), "\n")
}

// undoOverlay is the undo confirmation (m.undo) on the overlay stack: it
// takes every key, Ctrl+C quitting.
type undoOverlay struct{}

func (undoOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	if k.String() == "ctrl+c" {
		m.quitting = true
		return true, tea.Quit
	}
	m.undoKey(k.String())
	return true, nil
}

func (undoOverlay) view(m *Model) []string { return m.undoLines() }

// wheel scrolls the files and diffs a wheel notch.
func (undoOverlay) wheel(m *Model, up bool) {
	if up {
		m.undo.scroll -= wheelLines
	} else {
		m.undo.scroll += wheelLines
	}
}
