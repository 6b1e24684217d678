package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

const maxComposerLines = 6

// layout sizes the composer to the window and its content.
func (m *Model) layout() {
	m.composer.Fit(m.width, maxComposerLines)
}

// bodyHeight is what is left for the transcript.
func (m *Model) bodyHeight() int {
	fixed := 1 + 1 + 1 + m.composer.Height() + 1 // header, rule, rule, composer, status
	for _, p := range m.panels() {
		fixed += len(p)
	}
	return max(m.height-fixed, 1)
}

// panels are the lines between the transcript and the composer, in
// screen order (not the overlay stack's key order): the approval panel,
// the undo panel, the queued prompts, the slash menu, the plan view and
// the @-completion. An overlay not shown has no lines.
func (m *Model) panels() [][]string {
	return [][]string{approvalOverlay{}.view(m), undoOverlay{}.view(m), m.queueLines(),
		slashOverlay{}.view(m), planOverlay{}.view(m), mentionOverlay{}.view(m)}
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	// Cell-motion reporting brings the wheel; the terminal's own text
	// selection then takes a modifier (Shift in most terminals, Option in
	// macOS ones), as in other Bubble Tea applications.
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "scv"
	// Focus reports say when a notification is called for (notify.go).
	v.ReportFocus = m.notifyOn()
	return v
}

// Render is the frame as a string (View's content).
func (m *Model) Render() string {
	if m.quitting {
		return ""
	}
	var b strings.Builder
	st := m.render.styles
	b.WriteString(m.header())
	b.WriteByte('\n')
	rule := st.rule.Render(strings.Repeat("─", m.width))
	b.WriteString(rule)
	b.WriteByte('\n')
	// The picker takes the transcript's place.
	var body []string
	if m.picker != nil {
		body = pickerOverlay{}.view(m)
	} else {
		body = m.body(m.bodyHeight())
	}
	for _, l := range body {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, p := range m.panels() {
		for _, l := range p {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	b.WriteString(rule)
	b.WriteByte('\n')
	b.WriteString(m.composer.View())
	b.WriteByte('\n')
	b.WriteString(m.statusLine())
	return b.String()
}

func (m *Model) header() string {
	st := m.render.styles
	conn := st.ok.Render("● connected")
	switch m.conn {
	case disconnected:
		conn = st.err.Render("● disconnected")
	case reconnecting:
		conn = st.warn.Render("● reconnecting…")
	case connecting:
		conn = st.warn.Render("● connecting…")
	}
	left := st.header.Render("scv") + st.dim.Render(" │ ") + orDash(m.session.Model) + st.dim.Render(" │ ") + orDash(m.session.Cwd)
	room := m.width - ansi.StringWidth(conn) - 1
	if ansi.StringWidth(left) > room {
		left = ansi.TruncateLeft(left, ansi.StringWidth(left)-room+1, "…")
	}
	return left + strings.Repeat(" ", max(m.width-ansi.StringWidth(left)-ansi.StringWidth(conn), 1)) + conn
}

// body returns exactly h lines: the bottom of the transcript, shifted up
// by the scroll offset. Only items that reach the window are rendered.
// While scrolled up, lines added below since the last frame raise the
// offset, so the text in view stays put.
func (m *Model) body(h int) []string {
	items := m.tr.items
	m.render.target, m.render.selected = m.tr.target(), m.tr.sel
	if m.scroll > 0 && m.anchor != nil {
		if n, ok := m.linesDownFrom(m.anchor); ok {
			m.scroll = max(m.scroll+n-m.anchorLines, 0)
		}
	}
	var rev []string // lines from the bottom up
	need := h + m.scroll
	m.anchor, m.anchorLines = nil, 0
	for i := len(items) - 1; i >= 0 && len(rev) < need; i-- {
		ls := items[i].render(m.width, m.render)
		if len(ls) > 0 {
			if len(rev) > 0 {
				rev = append(rev, "")
			}
			for j := len(ls) - 1; j >= 0; j-- {
				rev = append(rev, ls[j])
			}
		}
		m.anchor, m.anchorLines = items[i], len(rev)
	}
	if len(rev) < need && m.tr.evicted > 0 {
		if len(rev) > 0 {
			rev = append(rev, "")
		}
		rev = append(rev, m.render.styles.dim.Render(fmt.Sprintf("… %d earlier items evicted (the transcript keeps the last %d)", m.tr.evicted, m.tr.max)))
	}
	complete := len(rev) < need
	if complete && m.st.before > 0 {
		if len(rev) > 0 {
			rev = append(rev, "")
		}
		rev = append(rev, m.render.styles.dim.Render(fmt.Sprintf("… %d earlier turns not loaded: PageUp here loads them", m.st.before-1)))
	}
	// Clamp the scroll to the content.
	if m.scroll > max(len(rev)-h, 0) {
		m.scroll = max(len(rev)-h, 0)
	}
	m.st.atTop = complete && m.scroll >= len(rev)-h
	lines := make([]string, h)
	for i := 0; i < h; i++ {
		j := m.scroll + h - 1 - i
		if j < len(rev) {
			lines[i] = rev[j]
		}
	}
	return lines
}

// linesDownFrom counts the lines from anchor to the bottom as body lays
// them out; false when anchor is no longer in the transcript.
func (m *Model) linesDownFrom(anchor *item) (int, bool) {
	n := 0
	items := m.tr.items
	for i := len(items) - 1; i >= 0; i-- {
		if k := len(items[i].render(m.width, m.render)); k > 0 {
			if n > 0 {
				n++
			}
			n += k
		}
		if items[i] == anchor {
			return n, true
		}
	}
	return 0, false
}

func (m *Model) queueLines() []string {
	if len(m.pending) == 0 || m.turnID == "" {
		return nil
	}
	st := m.render.styles
	var out []string
	for i, p := range m.pending {
		if i == 3 {
			out = append(out, st.dim.Render(fmt.Sprintf("  … %d more queued", len(m.pending)-3)))
			break
		}
		tag := "queued"
		if !p.queued {
			tag = "sending"
		}
		out = append(out, st.dim.Render(ansi.Truncate(fmt.Sprintf("  ⏳ %s: %s", tag, oneLine(p.text)), m.width, "…")))
	}
	return out
}

func (m *Model) statusLine() string {
	st := m.render.styles
	if m.picker != nil {
		return st.dim.Render(ansi.Truncate(m.pickerHint(), m.width, "…"))
	}
	var state string
	switch {
	case m.conn == connecting:
		state = st.warn.Render("connecting to the daemon…")
		if n := len(m.early); n > 0 {
			state += fmt.Sprintf(" · %d kept", n)
		}
	case m.conn == reconnecting:
		state = st.warn.Render(fmt.Sprintf("reconnecting (attempt %d of %d)", m.rd.attempt+1, maxRedials)) + " · esc stops"
	case m.conn == disconnected:
		state = st.err.Render("disconnected") + " · restart with `scv run` or `scv start`"
	case m.rd.offer:
		state = st.warn.Render("reconnected") + " · enter continues the session"
	case m.approval != nil:
		state = st.warn.Render("awaiting approval") + " · " + elapsed(m.now().Sub(m.turnStart))
	case m.undo != nil:
		state = st.warn.Render("undo? y/n")
	case m.st.rewind != nil:
		state = st.warn.Render(fmt.Sprintf("rewinding to turn %d", m.st.rewind.n))
	case m.turnID != "":
		state = st.accent.Render("running") + " · " + elapsed(m.now().Sub(m.turnStart))
	default:
		state = st.ok.Render("ready")
		if m.lastTurn > 0 {
			state += " · last turn " + elapsed(m.lastTurn)
		}
	}
	parts := []string{state, m.contextUse()}
	if l := m.spend.statusLabel(); l != "" {
		parts = append(parts, l)
	}
	if m.planning() {
		parts = append([]string{st.warn.Render("plan mode")}, parts...)
	}
	if n := len(m.pending); n > 0 && m.turnID != "" {
		parts = append(parts, fmt.Sprintf("%d queued", n))
	}
	if m.scroll > 0 {
		parts = append(parts, fmt.Sprintf("↑%d lines", m.scroll))
	}
	left := strings.Join(parts, st.dim.Render(" · "))
	for _, hint := range m.keyHints() {
		if gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(hint); gap >= 2 {
			return left + strings.Repeat(" ", gap) + st.dim.Render(hint)
		}
	}
	return ansi.Truncate(left, m.width, "…")
}

// keyHints name the keys that matter in the current state, each as it
// acts now (Ctrl+C clears a composer with text, else cancels a running
// turn, else quits: handleKey), longest first: the status line shows the
// first that fits.
func (m *Model) keyHints() []string {
	ctrlC := "ctrl+c quit"
	if m.composer.Value() != "" {
		ctrlC = "ctrl+c clear"
	}
	var keys, extra string // keys is what the state needs; extra helps
	switch {
	case m.conn == connecting:
		return []string{"enter keeps the prompt until connected · " + ctrlC, ctrlC}
	case m.conn == reconnecting:
		return []string{"esc stop trying · " + ctrlC}
	case m.conn == disconnected:
		if m.cfg.Redial != nil {
			return []string{"enter reconnect · " + ctrlC, ctrlC}
		}
		return []string{ctrlC}
	case m.undo != nil:
		return []string{"y undo · n keep · ctrl+c quit"}
	case m.st.rewind != nil:
		return []string{"enter send as a fork · esc cancel"}
	case m.turnID != "" && ctrlC == "ctrl+c quit":
		keys = "esc/ctrl+c cancel the turn"
	case m.turnID != "":
		keys = "esc cancel the turn · " + ctrlC
	case m.rd.offer:
		keys, extra = ctrlC, "enter continue · /new fresh · "
	default:
		keys, extra = ctrlC, "/help · ctrl+p sessions · "
		if m.planning() {
			extra = "/help · shift+tab leave plan · ctrl+p sessions · "
		}
	}
	if it := m.tr.sel; it != nil {
		sel := "alt+↑/↓ select · "
		if m.composer.Value() == "" {
			sel = "y copy · " + sel
		}
		if it.expandable() {
			sel = "ctrl+o expand · " + sel
		}
		return []string{sel + extra + keys, sel + keys, keys}
	}
	return []string{extra + keys, keys}
}

func (m *Model) contextUse() string {
	max := m.session.ContextMaxTokens
	if !m.haveUsage {
		return "ctx " + tokens(max)
	}
	s := fmt.Sprintf("ctx %s/%s", tokens(m.usage.InputTokens), tokens(max))
	if max > 0 {
		s += fmt.Sprintf(" (%d%%)", pct(m.usage.InputTokens, max))
	}
	return s
}

func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
