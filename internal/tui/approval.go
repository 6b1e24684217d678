package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// approvalLines is the approval panel: tool, risk, cwd and summary, with
// the keys that answer it. Empty when no approval is shown.
func (m *Model) approvalLines() []string {
	a := m.approval
	if a == nil {
		return nil
	}
	st := m.render.styles
	inner := max(m.width-4, 10) // border and padding
	field := func(label, v string) string {
		return ansi.Truncate(st.bold.Render(label)+oneLine(v), inner, "…")
	}
	rows := []string{
		st.warn.Render("Approve this tool call?"),
		field("tool:    ", a.name),
		field("risk:    ", a.risk),
		field("cwd:     ", a.cwd),
	}
	summary := strings.Split(ansi.Wrap(strings.TrimSpace(a.summary), inner-9, ""), "\n")
	if len(summary) > 4 {
		summary = append(summary[:4], "…")
	}
	for i, l := range summary {
		label := "         "
		if i == 0 {
			label = "summary: "
		}
		rows = append(rows, ansi.Truncate(st.bold.Render(label)+l, inner, "…"))
	}
	rows = append(rows, st.dim.Render("y approve · n deny · esc deny and cancel the turn"))
	box := st.panel.Width(m.width).Render(strings.Join(rows, "\n"))
	return strings.Split(box, "\n")
}
