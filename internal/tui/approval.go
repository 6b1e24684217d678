package tui

import (
	"fmt"
	"path"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
)

// Approval panel bounds: the summary and the diff show at most
// maxSummaryRows lines at a time (fewer when the window is short) and
// scroll with ↑/↓; they never cut a line or drop one, so everything that
// is approved can be read.
const (
	maxSummaryRows = 16
	minSummaryRows = 3
	// minBodyRows is the transcript left visible beside a long summary.
	minBodyRows = 3
)

// approvalMode is what the keys of the panel do: choose an answer, or
// edit the prefix of a session grant, or the reason of a denial.
type approvalMode int

const (
	modeChoose approvalMode = iota
	modePrefix
	modeReason
)

// approvalReq is the approval shown in the panel; scroll is the first
// scrolled line shown. The wrapped and styled lines are kept per width,
// so a frame with a long diff open costs the lines it shows.
type approvalReq struct {
	id, callID, name, risk, cwd, summary string
	// reason says why the call is asked although grants exist, or why no
	// grant (or only a narrow one) is offered.
	reason string
	diff   *proto.Diff
	grant  *proto.Grant
	scroll int
	mode   approvalMode
	input  string
	// save says the edited prefix or path is for a saved rule
	// ("always (save rule)"), not a session grant.
	save bool

	cacheWidth int
	sumLines   []string // the summary wrapped
	diffLines  []string // the diff header, lines and omission, styled
	inline     bool     // the summary fits beside its label
	scrolled   []string // what the panel scrolls (see Model.scrolled)
	compact    bool     // the last panel was the compact one
	// firstChange is the index in scrolled of the diff's first changed
	// line (-1: none); opened says the first panel was drawn, which
	// scrolls a diff that does not fit to that line once.
	firstChange int
	opened      bool
	// panel is the last rendered panel, valid while panelKey holds: a
	// frame asks for it twice (layout and drawing).
	panel    []string
	panelKey panelKey
	// shown is how many scrolled lines the last panel showed.
	shown int
}

type panelKey struct {
	width, height, scroll, queue, composer int
	mode                                   approvalMode
	input                                  string
}

// layoutLines wraps the summary and styles the diff for the panel's
// width, once per width.
func (m *Model) layoutLines() {
	a := m.approval
	if a.cacheWidth == m.width && a.sumLines != nil {
		return
	}
	st := m.render.styles
	w := max(m.width-4-2, 8) // border, padding, indent
	text := strings.ReplaceAll(strings.Trim(a.summary, "\n"), "\t", "    ")
	a.sumLines = strings.Split(ansi.Wrap(text, w, ""), "\n")
	a.diffLines = nil
	change := -1 // in diffLines
	if d := a.diff; d != nil {
		if d.Note != "" {
			a.diffLines = append(a.diffLines, st.dim.Render("("+oneLine(d.Note)+")"))
		}
		paint := newPainter(st)
		for _, l := range diffLines(d.Text) {
			l = strings.ReplaceAll(l, "\t", "    ")
			if change < 0 && changedLine(l) {
				change = len(a.diffLines)
			}
			if len(l) <= w || ansi.StringWidth(l) <= w { // bytes ≥ cells
				a.diffLines = append(a.diffLines, paint.line(l))
				continue
			}
			for _, part := range strings.Split(ansi.Wrap(l, w, ""), "\n") {
				a.diffLines = append(a.diffLines, paint.styled(l, part))
			}
		}
		if d.Omitted > 0 {
			a.diffLines = append(a.diffLines, st.dim.Render(fmt.Sprintf("… +%d more lines", d.Omitted)))
		}
	}
	a.inline = len(a.sumLines) == 1 && ansi.StringWidth(a.sumLines[0]) <= max(m.width-4, 10)-9
	a.scrolled = nil
	if !a.inline {
		a.scrolled = append(a.scrolled, a.sumLines...)
	}
	a.firstChange = -1
	if a.diff != nil {
		if !a.inline {
			a.scrolled = append(a.scrolled, st.bold.Render("diff: ")+diffStat(a.diff))
		}
		if change >= 0 {
			a.firstChange = len(a.scrolled) + change
		}
		a.scrolled = append(a.scrolled, a.diffLines...)
	}
	a.cacheWidth = m.width
}

// changedLine says l adds or removes a line (not a file header).
func changedLine(l string) bool {
	return (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ")
}

// openAtChange scrolls the compact panel (a short window), which shows
// rows of its n scrolled lines, when it is first drawn, to the diff's
// first changed line: the summary, file headers and context before it
// are a few ↑ away. off says where that line is in the lines the panel
// scrolls. The full panel opens at the top.
func (a *approvalReq) openAtChange(n, rows, off int) {
	if a.opened {
		return
	}
	a.opened = true
	if a.firstChange >= 0 && n > rows {
		a.scroll = min(a.firstChange+off, n-rows)
	}
}

// diffLines splits a diff's text into its lines.
func diffLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// diffStyle colours a diff line by its mark.
func diffStyle(st styles, l string) interface{ Render(...string) string } {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return st.bold
	case strings.HasPrefix(l, "@@"):
		return st.accent
	case strings.HasPrefix(l, "+"):
		return st.ok
	case strings.HasPrefix(l, "-"):
		return st.err
	case strings.HasPrefix(l, `\`):
		return st.dim
	}
	return plainStyle{}
}

// painter colours diff lines with the escape sequences of the styles,
// taken once: a style's Render per line costs more than the rest of a
// 5,000-line diff's layout together.
type painter struct {
	pre, suf [5]string // bold, accent, ok, err, dim
}

func newPainter(st styles) *painter {
	p := &painter{}
	for i, s := range []interface{ Render(...string) string }{st.bold, st.accent, st.ok, st.err, st.dim} {
		r := s.Render("\x00")
		if j := strings.IndexByte(r, 0); j >= 0 {
			p.pre[i], p.suf[i] = r[:j], r[j+1:]
		}
	}
	return p
}

// line colours l by its own mark.
func (p *painter) line(l string) string { return p.styled(l, l) }

// styled colours part (a piece of the diff line l) by l's mark.
func (p *painter) styled(l, part string) string {
	i := -1
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		i = 0
	case strings.HasPrefix(l, "@@"):
		i = 1
	case strings.HasPrefix(l, "+"):
		i = 2
	case strings.HasPrefix(l, "-"):
		i = 3
	case strings.HasPrefix(l, `\`):
		i = 4
	}
	if i < 0 {
		return part
	}
	return p.pre[i] + part + p.suf[i]
}

type plainStyle struct{}

func (plainStyle) Render(s ...string) string { return strings.Join(s, " ") }

// diffStat is "path +a −r".
func diffStat(d *proto.Diff) string {
	return fmt.Sprintf("%s +%d −%d", oneLine(d.Path), d.Added, d.Removed)
}

// inlineSummary says the summary is one line that fits beside its label.
func (m *Model) inlineSummary() bool {
	m.layoutLines()
	return m.approval.inline
}

// scrolled is what the panel scrolls: the summary when it does not fit on
// its line, then the diff (under a header line of its own when the
// summary is scrolled with it).
func (m *Model) scrolled() []string {
	m.layoutLines()
	return m.approval.scrolled
}

// keyLines are the answers the panel takes, or the line being edited
// with its keys, wrapped to the panel.
func (m *Model) keyLines() []string {
	a := m.approval
	st := m.render.styles
	inner := max(m.width-4, 10)
	var rows []string
	switch a.mode {
	case modePrefix:
		scope := "for this session"
		if a.save {
			scope = "always (a rule saved for this cwd)"
		}
		if a.grant != nil && a.grant.Path != "" {
			rows = append(rows, st.bold.Render("allow "+scope+" the writes under (a directory, ./ for the whole workspace, or the file):"),
				"› "+a.input+"█",
				st.dim.Render("enter allow · esc back · guarded paths (.git, .scv, .envrc, .env, hooks, CI workflows …) are still asked"))
			break
		}
		exact := " · empty: this exact command only"
		if a.save {
			exact = ""
		}
		rows = append(rows, st.bold.Render(fmt.Sprintf("allow %s the %s commands starting with:", scope, oneLine(a.name))),
			"› "+a.input+"█",
			st.dim.Render("enter allow"+exact+" · esc back · commands that chain or redirect (; & | < > $ ` …) are still asked"))
	case modeReason:
		rows = append(rows, st.bold.Render("deny with a reason (the model reads it):"),
			"› "+a.input+"█",
			st.dim.Render("enter deny · esc back"))
	default:
		keys := "y approve"
		if g := a.grant; g != nil {
			keys += " · a allow " + offerText(*g) + " for this session · s always (save rule)"
		}
		keys += " · n deny · r deny with a reason · esc deny and cancel the turn"
		rows = append(rows, st.dim.Render(keys))
	}
	var out []string
	for _, r := range rows {
		out = append(out, strings.Split(ansi.Wrap(r, inner, ""), "\n")...)
	}
	return out
}

// offerText says in a few words what the offered grant allows, for the
// panel's keys.
func offerText(g proto.Grant) string {
	switch {
	case g.Prefix != "":
		return "`" + oneLine(g.Prefix) + " …`"
	case g.Path == "./":
		return "writes anywhere in the workspace"
	case strings.HasSuffix(g.Path, "/"):
		return "writes under `" + oneLine(g.Path) + "`"
	case g.Path != "":
		return "writes to `" + oneLine(g.Path) + "`"
	case g.Command != "":
		return "this exact command"
	case g.Domain != "":
		return "fetches from `" + oneLine(g.Domain) + "`"
	}
	return oneLine(g.Tool)
}

// grantText says in words what a grant allows.
func grantText(g proto.Grant) string {
	risk := " (risk " + oneLine(g.Risk) + ")"
	tool := oneLine(g.Tool)
	switch {
	case g.Prefix != "" && g.Command != "":
		return fmt.Sprintf("%s commands starting with `%s`, and exactly `%s`%s", tool, oneLine(g.Prefix), oneLine(g.Command), risk)
	case g.Prefix != "":
		return fmt.Sprintf("%s commands starting with `%s`%s", tool, oneLine(g.Prefix), risk)
	case g.Command != "":
		return fmt.Sprintf("%s: exactly `%s`%s", tool, oneLine(g.Command), risk)
	case g.Path == "./":
		return tool + " calls anywhere in the workspace, except guarded paths" + risk
	case strings.HasSuffix(g.Path, "/"):
		return fmt.Sprintf("%s calls under `%s`, except guarded paths%s", tool, oneLine(g.Path), risk)
	case g.Path != "":
		return fmt.Sprintf("%s calls to `%s`%s", tool, oneLine(g.Path), risk)
	case g.Domain != "":
		return fmt.Sprintf("%s calls to `%s`%s", tool, oneLine(g.Domain), risk)
	}
	return tool + " calls" + risk
}

// ruleText says in words what a saved rule does and where it is written:
// "bash prefix `go test` → allow (/home/me/.scv/config.toml:12) in /src/app".
func ruleText(r proto.Grant) string {
	scope := ""
	switch {
	case r.Prefix != "":
		scope = " prefix `" + oneLine(r.Prefix) + "`"
	case r.Path != "":
		scope = " path `" + oneLine(r.Path) + "`"
	case r.Domain != "":
		scope = " domain `" + oneLine(r.Domain) + "`"
	}
	s := oneLine(r.Tool) + scope + " → " + oneLine(r.Decision)
	if r.Source != "" {
		s += " (" + oneLine(r.Source) + ")"
	}
	if r.Workspace != "" {
		s += " in " + oneLine(r.Workspace)
	}
	return s
}

// editsGrant says "a" opens the offered grant for editing (a command
// prefix or a write path) rather than granting at once.
func (a *approvalReq) editsGrant() bool {
	return a.grant != nil && (a.grant.Prefix != "" || a.grant.Path != "")
}

// editedGrant is the answer to send for the edited line text, and
// whether there is one (an emptied path asks for nothing). The server
// announces what it granted (tool.started.granted).
func (a *approvalReq) editedGrant(text string) (r proto.ApprovalResolve, ok bool) {
	r = proto.ApprovalResolve{Approved: true, Scope: proto.ScopeSession}
	if a.save {
		r.Scope = proto.ScopeRule
	}
	switch {
	case a.grant.Path != "":
		if text == "" {
			return r, false
		}
		r.Path = text
	case text == "" && a.save:
		return r, false // a rule takes a prefix
	case text == "":
		r.Exact = true
	default:
		r.Prefix = text
	}
	return r, true
}

// grantPath is how the server will read a typed write-grant path: the
// workspace ("./"), the written file itself, or a directory.
func grantPath(text string, d *proto.Diff) string {
	c := path.Clean(text)
	switch {
	case c == ".":
		return "./"
	case d != nil && c == d.Path && !strings.HasSuffix(text, "/"):
		return c
	}
	return c + "/"
}

// reasonLines are the panel's "why" line, wrapped to the panel.
func (m *Model) reasonLines() []string {
	a := m.approval
	if a.reason == "" {
		return nil
	}
	st := m.render.styles
	inner := max(m.width-4, 10)
	return strings.Split(ansi.Wrap(st.bold.Render("why:     ")+st.warn.Render(oneLine(a.reason)), inner, ""), "\n")
}

// summaryRows is how many scrolled lines the panel shows at once.
func (m *Model) summaryRows() int {
	chrome := 2 + 5 + len(m.keyLines()) + len(m.reasonLines()) // border; title, tool, risk, cwd, header
	avail := m.height - (4 + m.composer.Height()) - chrome - len(m.queueLines()) - minBodyRows
	return max(minSummaryRows, min(avail, maxSummaryRows))
}

// scrollApproval moves the scrolled lines by d, within their bounds.
func (m *Model) scrollApproval(d int) bool {
	if m.approval == nil {
		return false
	}
	m.approvalLines()
	n, rows := len(m.panelScrolled()), m.approval.shown
	if n <= rows {
		return false
	}
	m.approval.scroll = min(max(m.approval.scroll+d, 0), n-rows)
	return true
}

// approvalLines is the approval panel: tool, risk, cwd, summary and diff,
// with the keys that answer it. Empty when no approval is shown.
func (m *Model) approvalLines() []string {
	a := m.approval
	if a == nil {
		return nil
	}
	key := panelKey{width: m.width, height: m.height, scroll: a.scroll, queue: len(m.queueLines()), composer: m.composer.Height(), mode: a.mode, input: a.input}
	if a.panel != nil && a.panelKey == key {
		return a.panel
	}
	st := m.render.styles
	a.compact = false
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
	rows = append(rows, m.reasonLines()...)
	inline := m.inlineSummary()
	if inline {
		label := "summary: "
		if a.name == "bash" {
			label = "command: "
		}
		rows = append(rows, st.bold.Render(label)+a.sumLines[0])
	}
	lines := m.scrolled()
	show := m.summaryRows()
	budget := m.panelBudget()
	label, info := st.bold.Render("summary: "), fmt.Sprintf("%d lines", len(lines))
	if a.name == "bash" {
		// bash's summary is its command line and where it runs.
		label, info = st.bold.Render("command:"), ""
	}
	if inline && a.diff != nil {
		label, info = st.bold.Render("diff:    "), diffStat(a.diff)+fmt.Sprintf(" · %d lines", len(lines))
	}
	switch {
	case len(lines) == 0:
	case len(lines) <= show && info == "" && ansi.StringWidth(lines[0]) <= inner-9:
		// The command beside its label, where it runs below.
		rows = append(rows, label+" "+lines[0])
		for _, l := range lines[1:] {
			rows = append(rows, "  "+l)
		}
	case len(lines) <= show:
		rows = append(rows, ansi.Truncate(label+st.dim.Render(info), inner, "…"))
		for _, l := range lines {
			rows = append(rows, "  "+l)
		}
	default:
		first := min(max(a.scroll, 0), len(lines)-show)
		a.scroll = first
		head := fmt.Sprintf("%d lines, showing %d–%d · ↑/↓ scroll", len(lines), first+1, first+show)
		if info != "" && inline && a.diff != nil {
			head = fmt.Sprintf("%s, showing %d–%d · ↑/↓ scroll", info, first+1, first+show)
		}
		if info == "" {
			head = " " + head
		}
		rows = append(rows, ansi.Truncate(label+st.warn.Render(head), inner, "…"))
		for _, l := range lines[first : first+show] {
			rows = append(rows, "  "+l)
		}
	}
	rows = append(rows, m.keyLines()...)
	a.shown = min(show, len(lines))
	if len(rows)+2 > budget {
		rows = m.compactPanel(budget - 2)
	}
	box := st.panel.Width(m.width).Render(strings.Join(rows, "\n"))
	key.scroll = a.scroll // as clamped above
	a.panel, a.panelKey = strings.Split(box, "\n"), key
	return a.panel
}

// panelBudget is the most lines the approval panel may take: the window
// less the header, the rules, the composer, the status line, the queue
// and one transcript line, so the composer and the keys that answer the
// panel are always on screen.
func (m *Model) panelBudget() int {
	return m.height - (4 + m.composer.Height()) - len(m.queueLines()) - 1
}

// panelScrolled is what the panel scrolls: in the compact panel the
// summary scrolls with the diff even when it is one line.
func (m *Model) panelScrolled() []string {
	a := m.approval
	if a.compact && a.inline {
		return append([]string{a.sumLines[0]}, a.scrolled...)
	}
	return m.scrolled()
}

// compactPanel is the panel in a short window: the call on one line, as
// many scrolled lines as fit (at least one), and the keys in short form.
func (m *Model) compactPanel(room int) []string {
	a := m.approval
	st := m.render.styles
	inner := max(m.width-4, 10)
	a.compact = true
	lines := m.panelScrolled()
	var keys []string
	switch a.mode {
	case modePrefix:
		what := "enter allow for the session · esc back"
		if a.save {
			what = "enter save the rule · esc back"
		}
		keys = []string{"› " + a.input + "█", st.dim.Render(what)}
	case modeReason:
		keys = []string{"› " + a.input + "█", st.dim.Render("enter deny with this reason · esc back")}
	default:
		k := "y/n · r deny with reason · esc cancel turn"
		if a.grant != nil {
			k = "y/n · a session · s save rule · r reason · esc cancel turn"
			if ansi.StringWidth(k) > inner {
				// Narrow: the full panel (a taller window) offers it.
				k = "y/n · a session · r reason · esc cancel turn"
			}
		}
		keys = []string{st.dim.Render(k)}
	}
	for i := range keys {
		keys[i] = ansi.Truncate(keys[i], inner, "…")
	}
	var why []string
	if a.reason != "" && room-1-len(keys) >= 3 {
		why = []string{st.warn.Render(ansi.Truncate("why: "+oneLine(a.reason), inner, "…"))}
	}
	show := max(room-1-len(keys)-len(why), 1)
	off := 0
	if len(lines) > len(a.scrolled) {
		off = 1 // the one-line summary scrolls in front
	}
	a.openAtChange(len(lines), show, off)
	first := min(max(a.scroll, 0), max(len(lines)-show, 0))
	a.scroll, a.shown = first, min(show, len(lines))
	title := fmt.Sprintf("Approve %s (%s)", oneLine(a.name), oneLine(a.risk))
	if a.cwd != "" {
		title += " in " + oneLine(a.cwd)
	}
	title += "?"
	if len(lines) > show {
		title = fmt.Sprintf("%d–%d/%d ↑↓ · %s", first+1, first+show, len(lines), title)
	}
	rows := append([]string{st.warn.Render(ansi.Truncate(title, inner, "…"))}, why...)
	for _, l := range lines[first:min(first+show, len(lines))] {
		rows = append(rows, ansi.Truncate(l, inner, "…"))
	}
	return append(rows, keys...)
}

// approvalOverlay is the approval panel (m.approval) on the overlay
// stack: y, n, a, s and r answer it and the arrows scroll it; while a
// prefix or a reason is typed it takes every key.
type approvalOverlay struct{}

func (approvalOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	switch {
	case m.approval == nil:
		return false, nil
	case m.approval.mode != modeChoose:
		m.editApproval(k)
		return true, nil
	}
	return m.approvalKey(k.String()), nil
}

func (approvalOverlay) view(m *Model) []string { return m.approvalLines() }

// paste adds pasted text to a prefix or reason being typed.
func (approvalOverlay) paste(m *Model, text string) bool {
	a := m.approval
	if a == nil || a.mode == modeChoose {
		return false
	}
	a.appendInput(text, a.inputLimit())
	return true
}
