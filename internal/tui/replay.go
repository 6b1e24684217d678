package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// Stored sessions in the TUI (docs/tui.md): a resumed session's turns are
// redrawn from their stored events through apply, the code that shows live
// events, so the transcript looks as it did live; switching sessions,
// rewinding (a fork at an earlier prompt) and loading earlier turns all end
// here.

// storedState is what the model knows of the session's stored side.
type storedState struct {
	title string
	// before is the cursor of the turns not loaded (0: all are shown).
	before int
	// turns are the session's turns the transcript shows, oldest first:
	// what rewind offers.
	turns []turnRef
	// resumeReq is the request (session.resume or session.fork) whose
	// session.resumed will replace the session shown; forkPrompt is the
	// edited prompt sent once a fork opens.
	resumeReq  string
	forkPrompt string
	// olderReq is the pending session.turns request.
	olderReq string
	// rewind is the turn being rewound to while its prompt is edited.
	rewind *turnRef
	// atTop says the last frame showed the top of the transcript.
	atTop bool
}

// turnRef is one turn of the session: its id, its number and its prompt.
type turnRef struct {
	id     string
	n      int
	prompt string
}

// olderTurns is how many earlier turns one load asks for.
const olderTurns = 50

func isTerminal(ev proto.Event) bool {
	switch ev.(type) {
	case *proto.TurnCompleted, *proto.TurnFailed, *proto.TurnCancelled:
		return true
	}
	return false
}

// storedEvent handles the answers to the stored-session requests the TUI
// sends; false for any other event.
func (m *Model) storedEvent(ev proto.Event) (tea.Cmd, bool) {
	switch e := ev.(type) {
	case *proto.SessionResumed:
		if e.RequestID == "" || e.RequestID != m.st.resumeReq {
			return nil, true // not an answer to this TUI
		}
		m.switchTo(e)
		return nil, true
	case *proto.SessionListed:
		if m.picker != nil && e.RequestID == m.picker.listReq {
			m.picker.listed(e, m.session.SessionID, m.now())
		}
		return nil, true
	case *proto.SessionDeleted:
		if m.picker != nil && e.RequestID == m.picker.deleteReq {
			m.picker.deleted(e.SessionID)
		}
		return nil, true
	case *proto.SessionTurnsReply:
		if e.RequestID == m.st.olderReq {
			m.st.olderReq = ""
			m.prependOlder(e)
		}
		return nil, true
	case *proto.Error:
		return nil, m.storedError(e)
	}
	return nil, false
}

// storedError shows the refusal of a stored-session request where it
// belongs; false for an error answering anything else.
func (m *Model) storedError(e *proto.Error) bool {
	id := e.RequestID
	switch {
	case id == "":
		return false
	case id == m.st.resumeReq:
		m.st.resumeReq = ""
		if p := m.st.forkPrompt; p != "" {
			m.st.forkPrompt = ""
			m.composer.SetValue(p) // nothing is lost: edit and send again
			m.layout()
		}
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("could not open the session (%s): %s", e.Code, e.Message)})
		return true
	case id == m.st.olderReq:
		m.st.olderReq = ""
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("could not load earlier turns (%s): %s", e.Code, e.Message)})
		return true
	case m.picker != nil && (id == m.picker.listReq || id == m.picker.deleteReq):
		m.picker.status = fmt.Sprintf("%s: %s", e.Code, e.Message)
		m.picker.confirm = false
		return true
	}
	return false
}

// switchTo shows the session that session.resumed opened (a resume or a
// fork) in place of the one shown, which is then closed; a fork's edited
// prompt is sent as its first new turn.
func (m *Model) switchTo(e *proto.SessionResumed) {
	old, prompt := m.session.SessionID, m.st.forkPrompt
	m.picker = nil
	m.openResumed(e) // resets the stored state
	if old != "" && old != e.SessionID {
		m.sendMsg(&proto.SessionClose{Envelope: proto.Envelope{RequestID: m.nextRequestID()}, SessionID: old})
	}
	if prompt != "" {
		m.sendPrompt(prompt)
	}
}

// openResumed empties the view and redraws the resumed session's turns.
func (m *Model) openResumed(e *proto.SessionResumed) {
	shown := m.session.SessionID
	m.tr.reset()
	m.pending, m.approval, m.turnID = nil, nil, ""
	m.streaming, m.thinking, m.turnThinking = nil, nil, nil
	m.scroll, m.anchor, m.render.expanded = 0, nil, nil
	m.usage, m.haveUsage, m.spend, m.compacted, m.lastTurn = proto.Usage{}, false, spend{}, 0, 0
	started := e.Started()
	m.session = *visibleEvent(&started)
	m.st = storedState{title: termtext.Line(e.Title), before: e.Before}
	m.replayTurns(e.Turns)
	m.resumedPlan(e)
	m.spend.resumed(e.Usage)
	if e.ForkedFrom != "" {
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("rewound: a new session forked from %s before turn %s; the original is unchanged", e.ForkedFrom, e.ForkedAt)})
	}
	if e.PreviousBaseURL != "" {
		m.addItem(&item{kind: kindNotice, text: EndpointChanged(e)})
	}
	m.cust.compactReq = "" // a compaction asked for on another connection or session is not answered here
	if m.session.SessionID != shown {
		// Another session (another workspace, perhaps) has its own
		// commands, asked for when the menu opens; a reconnect to the
		// same one keeps the list.
		m.cust.list, m.cust.stale = nil, true
	}
	m.layout()
}

// replayTurns redraws stored turns, oldest first, as their events came,
// and each undo of their writes where it was shown live: after the last
// turn that had ended by then.
func (m *Model) replayTurns(turns []proto.StoredTurn) {
	ticking := m.ticking
	after := make([][]string, len(turns)) // undo notices after turn i
	for _, t := range turns {
		if t.Undone == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.Undone.At)
		i := len(turns) - 1
		for err == nil && i > 0 && turnEnd(turns[i]).After(at) {
			i--
		}
		after[i] = append(after[i], undoneText(t.Undone.Files, proto.UndoNote))
	}
	for i, t := range turns {
		m.replayTurn(t)
		for _, text := range after[i] {
			m.addItem(&item{kind: kindNotice, text: text})
		}
	}
	m.ticking = ticking // a replayed turn.started starts no clock
	if n := len(turns); n > 0 {
		started, err1 := time.Parse(time.RFC3339, turns[n-1].Started)
		ended, err2 := time.Parse(time.RFC3339, turns[n-1].Ended)
		if err1 == nil && err2 == nil {
			m.lastTurn = ended.Sub(started)
		}
	}
}

// turnEnd is when a stored turn ended (when it started, for a turn that
// never ended); zero when unknown.
func turnEnd(t proto.StoredTurn) time.Time {
	s := t.Ended
	if s == "" {
		s = t.Started
	}
	end, _ := time.Parse(time.RFC3339, s)
	return end
}

// replayTurn redraws one stored turn: its prompt, then each stored event
// through apply. A turn without its terminal event (interrupted by a
// process that died) is closed the way a live turn ends, with a notice.
func (m *Model) replayTurn(t proto.StoredTurn) {
	own := ownImages(t)
	m.pending = []pendingPrompt{{text: t.Prompt, chips: storedChips(own)}}
	ended := false
	for _, raw := range t.Events {
		ev, err := proto.DecodeEvent(raw)
		if err != nil {
			continue
		}
		ev = visibleEvent(ev)
		m.apply(ev)
		ended = ended || isTerminal(ev)
	}
	if len(m.pending) > 0 { // no turn.started among the events
		m.pending = nil
		m.addItem(&item{kind: kindUser, text: termtext.Block(t.Prompt)})
		if len(own) > 0 {
			m.addItem(&item{kind: kindNotice, text: storedChips(own)})
		}
		m.st.turns = append(m.st.turns, turnRef{id: t.TurnID, prompt: t.Prompt})
	}
	if k := len(m.st.turns); k > 0 {
		m.st.turns[k-1].n = t.N
	}
	m.spend.numbered(t.TurnID, t.N)
	m.remember(t.Prompt)
	if t.EventsOmitted {
		m.addItem(&item{kind: kindNotice, text: "this turn is too large to redraw here; `scv sessions show` prints it"})
	}
	if ended {
		return
	}
	m.turnEnded()
	m.finishOpenTools(toolCancelled)
	switch t.State {
	case proto.TurnStateCompleted:
	case proto.TurnStateFailed:
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("turn failed (%s): %s", termtext.Line(t.ErrorCode), termtext.Block(t.ErrorMessage))})
	case proto.TurnStateCancelled:
		m.addItem(&item{kind: kindNotice, text: cancelledNote})
	default:
		msg := t.ErrorMessage
		if msg == "" {
			msg = "the turn did not end"
		}
		m.addItem(&item{kind: kindNotice, text: "turn interrupted: " + termtext.Line(msg)})
	}
}

// loadOlder asks for the turns before those shown.
func (m *Model) loadOlder() {
	if m.st.before <= 0 || m.st.olderReq != "" || m.conn != connected {
		return
	}
	id := m.nextRequestID()
	if m.sendMsg(&proto.SessionTurnsRequest{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID, Before: m.st.before, Limit: olderTurns}) {
		m.st.olderReq = id
	}
}

// prependOlder redraws earlier turns in a model of their own and puts
// their rows above the transcript.
func (m *Model) prependOlder(e *proto.SessionTurnsReply) {
	older := New(Config{Session: m.session, Now: m.now, MaxItems: m.tr.max, Width: m.width, Height: m.height})
	older.replayTurns(e.Turns)
	room := m.tr.max - len(m.tr.items)
	items := older.tr.items
	if len(items) > room {
		items = items[len(items)-max(room, 0):]
		m.tr.evicted += len(older.tr.items) - len(items)
	}
	m.tr.items = append(append([]*item{}, items...), m.tr.items...)
	for _, it := range items {
		if it.kind == kindTool && it.callID != "" {
			if _, ok := m.tr.tools[it.callID]; !ok {
				m.tr.tools[it.callID] = it
			}
		}
	}
	m.st.turns = append(older.st.turns, m.st.turns...)
	m.spend.prepend(older.spend.turns)
	m.history = append(older.history, m.history...)
	m.histIdx = len(m.history)
	m.st.before = e.Before
}

// EndpointChanged is the notice of a resume that moved the session to
// another endpoint (session.resumed previous_base_url), shown before
// anything is sent there.
func EndpointChanged(e *proto.SessionResumed) string {
	return fmt.Sprintf("endpoint changed: %s → %s", termtext.Line(e.PreviousBaseURL), termtext.Line(e.BaseURL))
}
