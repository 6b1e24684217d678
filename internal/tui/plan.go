package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// Plan mode and the todo list (docs/tui.md): Shift+Tab (or /plan) cycles
// the session's mode; leaving plan mode after a plan was written offers to
// carry it out; the model's todo list is a checklist above the composer
// that Ctrl+T folds to one line.

// acceptPrefix starts the prompt that carries out an accepted plan.
const acceptPrefix = "Carry out this plan:\n\n"

// maxTodoRows bounds the unfolded checklist's item rows.
const maxTodoRows = 8

// planState is the session's mode and todo list as the server last said,
// and the plan-mode turn's answer an accept would send.
type planState struct {
	mode  string
	todos []proto.TodoItem
	// folded shows the checklist as one line (Ctrl+T).
	folded bool
	// answer is the last answer of the running turn; plan is the answer
	// of the last completed turn run in plan mode ("" once used).
	answer, plan string
	// offer shows the accept-plan panel.
	offer bool
}

func (m *Model) planning() bool { return m.pl.mode == proto.ModePlan }

// setMode asks the server for mode; the view follows its session.mode.
func (m *Model) setMode(mode string) {
	switch m.conn {
	case connecting:
		m.addItem(&item{kind: kindError, text: "still connecting to the daemon: the mode can be changed once the session has started"})
		return
	case disconnected, reconnecting:
		m.addItem(&item{kind: kindError, text: "not connected; the mode cannot be changed"})
		return
	}
	m.sendMsg(&proto.SessionSetMode{Envelope: proto.Envelope{RequestID: m.nextRequestID()}, SessionID: m.session.SessionID, Mode: mode})
}

// cycleMode is Shift+Tab and /plan: into plan mode, or out of it (with the
// accept offer when a plan was written and no turn runs).
func (m *Model) cycleMode() {
	switch {
	case !m.planning():
		m.setMode(proto.ModePlan)
	case m.pl.plan != "" && m.idle():
		m.pl.offer = true
	default:
		m.setMode(proto.ModeDefault)
	}
}

// planKey handles the keys of plan mode and the checklist; false leaves
// the key to the others.
func (m *Model) planKey(s string) (tea.Cmd, bool) {
	if m.pl.offer && !m.idle() {
		m.pl.offer = false // a turn started meanwhile (another client)
	}
	if m.pl.offer {
		switch s {
		case "y", "Y", "enter":
			plan := m.pl.plan
			m.pl.offer, m.pl.plan = false, ""
			m.setMode(proto.ModeDefault)
			m.sendPrompt(acceptPrefix + plan)
		case "n", "N":
			m.pl.offer = false
			m.setMode(proto.ModeDefault)
		case "esc":
			m.pl.offer = false
		case "ctrl+c":
			m.quitting = true
			return tea.Quit, true
		}
		return nil, true
	}
	switch s {
	case "shift+tab":
		m.cycleMode()
		return nil, true
	case "ctrl+t":
		// While a list is shown; otherwise the composer's transpose.
		if len(m.pl.todos) > 0 {
			m.pl.folded = !m.pl.folded
			return nil, true
		}
	}
	return nil, false
}

// planEvent applies the events of this file's state; false for others.
func (m *Model) planEvent(ev proto.Event) {
	switch e := ev.(type) {
	case *proto.SessionMode:
		if e.Mode != m.pl.mode {
			m.pl.mode = e.Mode
			text := "plan mode: only read-only tools run, and the model answers with a plan · Shift+Tab leaves it"
			if !m.planning() {
				text = "default mode: calls run under the approval policy again"
			}
			m.addItem(&item{kind: kindNotice, text: text})
		}
	case *proto.TodoUpdated:
		m.pl.todos = e.Items
	case *proto.SessionCleared:
		// The conversation the plan came from is gone.
		m.pl.answer, m.pl.plan, m.pl.offer = "", "", false
	case *proto.TurnStarted:
		m.pl.answer = ""
	case *proto.AssistantCompleted:
		if strings.TrimSpace(e.Content) != "" {
			m.pl.answer = e.Content
		}
	case *proto.TurnCompleted:
		if m.planning() && m.pl.answer != "" {
			m.pl.plan = m.pl.answer
		}
	}
}

// resumedPlan takes a resumed session's mode and todo list.
// In plan mode the last answer replayed is the plan an accept sends.
func (m *Model) resumedPlan(e *proto.SessionResumed) {
	last := m.pl.answer
	todos := make([]proto.TodoItem, len(e.Todos))
	for i, it := range e.Todos {
		todos[i] = proto.TodoItem{Content: termtext.Line(it.Content), Status: termtext.Line(it.Status)}
	}
	m.pl = planState{mode: termtext.Line(e.Mode), todos: todos, folded: m.pl.folded}
	if m.pl.mode == "" {
		m.pl.mode = proto.ModeDefault
	}
	if m.planning() {
		m.pl.plan = last
	}
}

// offerLines is the accept-plan panel.
func (m *Model) offerLines() []string {
	if !m.pl.offer {
		return nil
	}
	st := m.render.styles
	first := oneLine(m.pl.plan)
	return []string{
		st.warn.Render("Leave plan mode") + st.dim.Render(ansi.Truncate(" · plan: "+first, max(m.width-15, 1), "…")),
		ansi.Truncate("  y carry it out (sent as the next prompt) · n just leave · esc keep planning", m.width, "…"),
	}
}

// todoMark is an item's checkbox.
func todoMark(status string) string {
	switch status {
	case proto.TodoCompleted:
		return "☑"
	case proto.TodoInProgress:
		return "◐"
	}
	return "☐"
}

// todoLines is the checklist above the composer: a header with the count
// done, then the items (bounded), or one line when folded.
func (m *Model) todoLines() []string {
	items := m.pl.todos
	if len(items) == 0 {
		return nil
	}
	st := m.render.styles
	done, current := 0, -1
	for i, it := range items {
		if it.Status == proto.TodoCompleted {
			done++
		}
		if it.Status == proto.TodoInProgress && current < 0 {
			current = i
		}
	}
	head := fmt.Sprintf("Todo %d/%d", done, len(items))
	if m.pl.folded {
		line := st.bold.Render(head)
		if current >= 0 {
			line += " · " + todoMark(items[current].Status) + " " + items[current].Content
		}
		return []string{ansi.Truncate(line+st.dim.Render(" (ctrl+t shows all)"), m.width, "…")}
	}
	out := []string{ansi.Truncate(st.bold.Render(head)+st.dim.Render(" (ctrl+t folds)"), m.width, "…")}
	// The rows shown start so that the item in progress is in view.
	start := 0
	if current >= maxTodoRows {
		start = current - maxTodoRows + 1
	}
	if start > 0 {
		out = append(out, st.dim.Render(fmt.Sprintf("  … %d earlier", start)))
	}
	end := min(start+maxTodoRows, len(items))
	for _, it := range items[start:end] {
		text := "  " + todoMark(it.Status) + " " + it.Content
		switch it.Status {
		case proto.TodoCompleted:
			text = st.dim.Render(text)
		case proto.TodoInProgress:
			text = st.accent.Render(text)
		}
		out = append(out, ansi.Truncate(text, m.width, "…"))
	}
	if rest := len(items) - end; rest > 0 {
		out = append(out, st.dim.Render(fmt.Sprintf("  … %d more", rest)))
	}
	return out
}

// planOverlay is the plan view on the overlay stack, always there: the
// todo list and the accept-plan offer, with Shift+Tab and Ctrl+T (and
// every key while the offer is shown).
type planOverlay struct{}

func (planOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	cmd, ok := m.planKey(k.String())
	return ok, cmd
}

func (planOverlay) view(m *Model) []string { return append(m.todoLines(), m.offerLines()...) }
