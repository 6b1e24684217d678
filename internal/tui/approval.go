package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Approval panel bounds: the summary shows at most maxSummaryRows lines at
// a time (fewer when the window is short) and scrolls with ↑/↓; it never
// cuts a line or drops one, so everything that is approved can be read.
const (
	maxSummaryRows = 16
	minSummaryRows = 3
	// panelChrome is the panel's fixed rows: border (2), title, tool,
	// risk, cwd, summary header, keys.
	panelChrome = 8
	// minBodyRows is the transcript left visible beside a long summary.
	minBodyRows = 3
)

// summaryLines is the approval summary wrapped to the panel's width.
// Control characters were made visible when the event arrived; tabs become
// spaces here so widths are exact.
func (m *Model) summaryLines() []string {
	a := m.approval
	text := strings.ReplaceAll(strings.Trim(a.summary, "\n"), "\t", "    ")
	w := max(m.width-4-2, 8) // border, padding, indent
	return strings.Split(ansi.Wrap(text, w, ""), "\n")
}

// summaryRows is how many summary lines the panel shows at once.
func (m *Model) summaryRows() int {
	avail := m.height - (4 + m.composer.Height()) - panelChrome - len(m.queueLines()) - minBodyRows
	return max(minSummaryRows, min(avail, maxSummaryRows))
}

// scrollApproval moves the summary by d lines, within its bounds.
func (m *Model) scrollApproval(d int) bool {
	if m.approval == nil {
		return false
	}
	n, rows := len(m.summaryLines()), m.summaryRows()
	if n <= rows {
		return false
	}
	m.approval.scroll = min(max(m.approval.scroll+d, 0), n-rows)
	return true
}

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
	lines := m.summaryLines()
	show := m.summaryRows()
	switch {
	case len(lines) == 1 && ansi.StringWidth(lines[0]) <= inner-9:
		rows = append(rows, st.bold.Render("summary: ")+lines[0])
	case len(lines) <= show:
		rows = append(rows, st.bold.Render("summary: ")+st.dim.Render(fmt.Sprintf("%d lines", len(lines))))
		for _, l := range lines {
			rows = append(rows, "  "+l)
		}
	default:
		first := min(max(a.scroll, 0), len(lines)-show)
		a.scroll = first
		head := fmt.Sprintf("%d lines, showing %d–%d · ↑/↓ scroll", len(lines), first+1, first+show)
		rows = append(rows, st.bold.Render("summary: ")+st.warn.Render(head))
		for _, l := range lines[first : first+show] {
			rows = append(rows, "  "+l)
		}
	}
	rows = append(rows, st.dim.Render("y approve · n deny · esc deny and cancel the turn"))
	box := st.panel.Width(m.width).Render(strings.Join(rows, "\n"))
	return strings.Split(box, "\n")
}
