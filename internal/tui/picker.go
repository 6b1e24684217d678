package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// The picker takes the transcript's place: the stored sessions to resume
// (Ctrl+P, /sessions), or this session's earlier prompts to rewind to
// (Ctrl+R, /rewind). Its keys are in the status line while it is open.

type pickerMode int

const (
	pickSession pickerMode = iota
	pickRewind
	pickModel
)

// pickerListLimit is how many sessions the picker lists.
const pickerListLimit = 200

type picker struct {
	mode pickerMode
	all  bool // every workspace, not only this one
	// unanswered lists the sessions that failed before any answer too
	// (session.list all; Ctrl+A).
	unanswered bool
	// src are every row of the list; rows those the typed filter
	// matches (all of them while it is empty), cursor an index into rows.
	src    []pickRow
	rows   []pickRow
	filter string
	cursor int
	// listReq and deleteReq are the pending session.list and
	// session.delete; loading is set until the list came.
	listReq, deleteReq string
	loading            bool
	confirm            bool // the cursor's session awaits "y" to be deleted
	status             string
	// profile is the provider profile whose models a model picker
	// lists ("" for the session's own).
	profile string
	others  bool // it has a row per other profile
}

// pickRow is one entry: a session, or an earlier turn of this session.
type pickRow struct {
	id      string // session id, or turn id
	title   string
	cwd     string
	meta    string // age, turns, size; or the turn number
	live    string
	current bool
	turn    turnRef
	// also is more text the filter matches (a renamed session's first
	// prompt).
	also string
	// profile is a model row's provider profile when not the session's
	// own; profileRow marks a row that stands for that profile.
	profile    string
	profileRow bool
}

// setRows replaces the picker's list and applies the filter to it.
func (p *picker) setRows(rows []pickRow) {
	p.src = rows
	p.applyFilter()
}

// applyFilter keeps the rows whose title holds the filter's characters
// in order (case folded; "fxtst" finds "Fix the flaky test"), most
// recent first as listed.
func (p *picker) applyFilter() {
	p.rows = p.rows[:0:0]
	for _, r := range p.src {
		if fuzzy(p.filter, r.title) || r.also != "" && fuzzy(p.filter, r.also) {
			p.rows = append(p.rows, r)
		}
	}
	p.cursor = min(p.cursor, max(len(p.rows)-1, 0))
}

// fuzzy says every character of pattern occurs in text, in order,
// ignoring case and spaces in the pattern.
func fuzzy(pattern, text string) bool {
	text = strings.ToLower(text)
	for _, c := range strings.ToLower(pattern) {
		if c == ' ' {
			continue
		}
		i := strings.IndexRune(text, c)
		if i < 0 {
			return false
		}
		text = text[i+len(string(c)):]
	}
	return true
}

// filterKey edits the filter with a typed key; false for other keys.
func (p *picker) filterKey(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "backspace":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter = string(r[:len(r)-1])
		}
	case "ctrl+u":
		p.filter = ""
	default:
		if k.Text == "" || k.Mod&^textMods != 0 {
			return false
		}
		if t := clean(k.Text); t != "" && !strings.Contains(t, "\n") && len(p.filter) < 200 {
			p.filter += t
		}
	}
	p.cursor = 0
	p.applyFilter()
	return true
}

// openSessions opens the session picker and asks for the list.
func (m *Model) openSessions(all bool) {
	m.picker = &picker{mode: pickSession, all: all, loading: true}
	m.requestList()
}

func (m *Model) requestList() {
	p := m.picker
	id := m.nextRequestID()
	ws := m.session.Cwd
	if p.all {
		ws = ""
	}
	p.listReq, p.loading, p.status, p.confirm = id, true, "", false
	if !m.sendMsg(&proto.SessionList{Envelope: proto.Envelope{RequestID: id}, Workspace: ws, Limit: pickerListLimit, All: p.unanswered}) {
		p.loading, p.status = false, "not connected"
	}
}

// listed fills the picker from session.listed.
func (p *picker) listed(e *proto.SessionListed, current string, now time.Time) {
	p.loading = false
	var rows []pickRow
	for _, s := range e.Sessions {
		title := termtext.Line(s.Title)
		if title == "" {
			title = "(no prompt)"
		}
		state := termtext.Line(s.LastTurn) // of its latest turn
		if state == "" {
			state = "no turns"
		}
		meta := fmt.Sprintf("%s · %s · %s · %-11s", ago(now, s.Updated), plural(s.Turns, "turn"), byteSize(int(s.Bytes)), state)
		rows = append(rows, pickRow{id: s.SessionID, title: title, cwd: termtext.Line(s.Cwd), meta: meta,
			live: termtext.Line(s.LiveIn), current: s.SessionID == current, also: termtext.Line(s.FirstPrompt)})
	}
	p.setRows(rows)
	if len(p.src) == 0 {
		p.status = "no stored sessions here (tab lists every workspace)"
		if p.all {
			p.status = "no stored sessions yet"
		}
	}
}

func (p *picker) deleted(id string) {
	p.deleteReq, p.confirm = "", false
	for i, r := range p.src {
		if r.id == id {
			p.src = append(p.src[:i:i], p.src[i+1:]...)
			p.status = "deleted " + r.title
			break
		}
	}
	p.applyFilter()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ago is how long before now an RFC 3339 time was, shortly.
func ago(now time.Time, stamp string) string {
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// openRewind opens the list of this session's earlier prompts.
func (m *Model) openRewind() {
	if !m.idle() {
		m.addItem(&item{kind: kindError, text: "rewind works when the session is idle (Esc cancels the turn)"})
		return
	}
	if len(m.st.turns) == 0 {
		m.addItem(&item{kind: kindNotice, text: "nothing to rewind to: this session has no earlier prompt yet"})
		return
	}
	p := &picker{mode: pickRewind}
	var rows []pickRow
	for i := len(m.st.turns) - 1; i >= 0; i-- {
		t := m.st.turns[i]
		rows = append(rows, pickRow{id: t.id, title: oneLine(t.prompt), meta: fmt.Sprintf("turn %d", t.n), turn: t})
	}
	p.setRows(rows)
	if m.st.before > 0 {
		p.status = "earlier turns are not loaded; PgUp at the top of the transcript loads them"
	}
	m.picker = p
}

func (m *Model) idle() bool { return m.turnID == "" && len(m.pending) == 0 && m.st.resumeReq == "" }

// pickerKey handles a key while the picker is open.
func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	s := k.String()
	if p.confirm {
		p.confirm = false
		if s == "y" || s == "Y" {
			r := p.rows[p.cursor]
			p.deleteReq = m.nextRequestID()
			p.status = "deleting " + r.title + "…"
			m.sendMsg(&proto.SessionDelete{Envelope: proto.Envelope{RequestID: p.deleteReq}, SessionID: r.id})
		} else {
			p.status = "kept"
		}
		return nil
	}
	switch s {
	case "esc":
		if p.filter != "" { // the first Esc clears the filter
			p.filter, p.cursor = "", 0
			p.applyFilter()
			break
		}
		m.picker = nil
	case "ctrl+p", "ctrl+r":
		m.picker = nil
	case "ctrl+c":
		m.quitting = true
		return tea.Quit
	case "up":
		p.cursor = max(p.cursor-1, 0)
	case "down":
		p.cursor = min(p.cursor+1, max(len(p.rows)-1, 0))
	case "pgup":
		p.cursor = max(p.cursor-max(m.bodyHeight()/2-1, 1), 0)
	case "pgdown":
		p.cursor = min(p.cursor+max(m.bodyHeight()/2-1, 1), max(len(p.rows)-1, 0))
	case "tab":
		if p.mode == pickSession {
			p.all = !p.all
			p.cursor = 0
			m.requestList()
		}
	case "ctrl+a":
		if p.mode == pickSession {
			p.unanswered = !p.unanswered
			p.cursor = 0
			m.requestList()
		}
	case "delete", "ctrl+d":
		if p.mode == pickSession && len(p.rows) > 0 {
			r := p.rows[p.cursor]
			if r.current {
				p.status = "this is the session shown; open another one first"
				break
			}
			p.confirm = true
			p.status = fmt.Sprintf("delete %q with everything stored of it? y deletes, any other key keeps it", r.title)
		}
	case "enter":
		m.pick()
	default:
		p.filterKey(k) // typing filters the list
	}
	return nil
}

// pick acts on the row under the cursor.
func (m *Model) pick() {
	p := m.picker
	if len(p.rows) == 0 {
		return
	}
	r := p.rows[p.cursor]
	if p.mode == pickModel {
		m.pickModelRow(r)
		return
	}
	if p.mode == pickRewind {
		t := r.turn
		m.st.rewind = &t
		m.picker = nil
		m.composer.SetValue(t.prompt)
		m.layout()
		return
	}
	if r.current {
		m.picker = nil
		return
	}
	if !m.idle() {
		p.status = "a turn is running; Esc cancels it before switching sessions"
		return
	}
	id := m.nextRequestID()
	if m.sendMsg(m.cfg.Client.resume(id, r.id)) {
		m.st.resumeReq = id
		p.status = "opening " + r.title + "…"
	}
}

// forkWith sends the rewound turn's edited prompt: a fork of the session
// just before that turn, which then runs text.
func (m *Model) forkWith(text string) {
	if !m.idle() {
		m.addItem(&item{kind: kindError, text: "a turn is running; Esc cancels it before the rewound prompt can be sent"})
		return
	}
	t := m.st.rewind
	id := m.nextRequestID()
	if !m.sendMsg(m.cfg.Client.fork(id, m.session.SessionID, t.id)) {
		return
	}
	m.st.rewind = nil
	m.st.resumeReq, m.st.forkPrompt = id, text
	m.composer.Reset()
	m.scroll = 0
	m.layout()
}

// cancelRewind leaves rewinding; the composer is emptied.
func (m *Model) cancelRewind() {
	m.st.rewind = nil
	m.composer.Reset()
	m.layout()
}

// pickerHint is the status line's key help while the picker is open.
func (m *Model) pickerHint() string {
	if m.picker.confirm {
		return "y delete · any key keep"
	}
	switch m.picker.mode {
	case pickRewind:
		return "↑/↓ move · enter edit this prompt · esc close"
	case pickModel:
		if m.picker.others {
			return "↑/↓ move · enter use this model (⇄ list that profile's) · esc close"
		}
		return "↑/↓ move · enter use this model for the next turns · esc close"
	}
	scope := "tab all dirs"
	if m.picker.all {
		scope = "tab this dir"
	}
	failed := "ctrl+a show failed"
	if m.picker.unanswered {
		failed = "ctrl+a hide failed"
	}
	return "↑/↓ · enter open · " + scope + " · " + failed + " · del delete · esc close"
}

// pickerLines renders the picker in h lines.
func (m *Model) pickerLines(h int) []string {
	p := m.picker
	st := m.render.styles
	head := "Sessions in " + m.session.Cwd
	if p.all {
		head = "Sessions of every workspace"
	}
	if p.mode == pickRewind {
		head = "Rewind: pick an earlier prompt to edit; it is sent as a new session forked before that turn"
	}
	if p.mode == pickModel {
		head = "Models of this session's provider"
		if p.others {
			head += " · ⇄ other profiles"
		}
		if p.profile != "" {
			head = "Models of profile " + p.profile + " (picking one moves the session)"
		}
	}
	switch {
	case p.filter != "":
		head += fmt.Sprintf(" · filter: %s (%d of %d)", p.filter, len(p.rows), len(p.src))
	case len(p.src) > 1:
		head += " · type to filter"
	}
	lines := []string{st.header.Render(ansi.Truncate(head, m.width, "…"))}
	if p.filter != "" && len(p.rows) == 0 && !p.loading {
		lines = append(lines, st.warn.Render(ansi.Truncate("nothing matches; backspace edits the filter, esc clears it", m.width, "…")))
	}
	if p.status != "" || p.loading {
		msg := p.status
		if p.loading {
			msg = "loading…"
		}
		lines = append(lines, st.warn.Render(ansi.Truncate(msg, m.width, "…")))
	}
	per := 2 // lines per row
	if p.mode != pickSession {
		per = 1
	}
	room := max((h-len(lines))/per, 1)
	first := max(0, min(p.cursor-room/2, len(p.rows)-room))
	for i := first; i < len(p.rows) && i < first+room; i++ {
		lines = append(lines, m.pickRowLines(p.rows[i], i == p.cursor)...)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines[:h]
}

func (m *Model) pickRowLines(r pickRow, selected bool) []string {
	st := m.render.styles
	mark := "  "
	if selected {
		mark = st.accent.Render("▸ ")
	}
	right := st.dim.Render(" " + r.meta)
	titleRoom := max(m.width-2-ansi.StringWidth(right), 8)
	title := ansi.Truncate(r.title, titleRoom, "…")
	if selected {
		title = st.header.Render(title)
	}
	first := mark + title + strings.Repeat(" ", max(titleRoom-ansi.StringWidth(ansi.Strip(title)), 0)) + right
	if m.picker.mode != pickSession {
		return []string{ansi.Truncate(first, m.width, "…")}
	}
	second := r.cwd
	switch {
	case r.current:
		second += " · this session"
	case r.live != "":
		second += " · open in " + r.live
	}
	return []string{ansi.Truncate(first, m.width, "…"), st.dim.Render(ansi.Truncate("    "+second, m.width, "…"))}
}

// pickerOverlay is the picker (m.picker) on the overlay stack: it takes
// the transcript's place and every key.
type pickerOverlay struct{}

func (pickerOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	return true, m.pickerKey(k)
}

func (pickerOverlay) view(m *Model) []string { return m.pickerLines(m.bodyHeight()) }

// wheel moves the cursor a row.
func (pickerOverlay) wheel(m *Model, up bool) {
	p := m.picker
	if up {
		p.cursor = max(p.cursor-1, 0)
	} else {
		p.cursor = min(p.cursor+1, max(len(p.rows)-1, 0))
	}
}
