package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// handleEvent applies one server event to the view state. Types it does
// not show (and types newer than this client) are ignored.
func (m *Model) handleEvent(ev proto.Event) tea.Cmd {
	ev = visibleEvent(ev)
	if se, ok := ev.(proto.SessionEvent); ok {
		if id := se.Session().SessionID; id != "" && m.session.SessionID != "" && id != m.session.SessionID {
			return nil
		}
	}
	if cmd, ok := m.storedEvent(ev); ok {
		return cmd
	}
	started := m.turnStart
	cmd := m.apply(ev)
	// Live events only: a replayed turn calls for no attention.
	return tea.Batch(cmd, m.notifyFor(ev, started))
}

// apply shows one event of the session: a live one, or a stored one being
// replayed (replay.go), through the same code.
func (m *Model) apply(ev proto.Event) tea.Cmd {
	m.planEvent(ev)
	if cmd, ok := m.applyTurn(ev); ok {
		return cmd
	}
	m.applySession(ev)
	return nil
}

// applyTurn shows the events of a turn: its start and end, the answer
// streamed and the tool calls; false for other events.
func (m *Model) applyTurn(ev proto.Event) (tea.Cmd, bool) {
	switch e := ev.(type) {
	case *proto.TurnStarted:
		return m.turnStarted(e), true
	case *proto.QueueEnqueued:
		for i := range m.pending {
			if m.pending[i].requestID == e.RequestID {
				m.pending[i].queued = true
			}
		}
	case *proto.AssistantReasoning:
		if e.Content != "" {
			m.addReasoning(e.Content)
		}
	case *proto.AssistantDelta:
		if e.Content != "" {
			m.endReasoning()
			it := m.assistantItem()
			it.text += e.Content
			it.touch()
		}
	case *proto.AssistantCompleted:
		m.endReasoning()
		m.assistantDone(e)
	case *proto.ToolProposed:
		m.endReasoning()
		m.streaming = nil
		m.addItem(&item{kind: kindTool, callID: e.CallID, name: e.Name, args: argSummary(e.Arguments)})
	case *proto.ApprovalRequested:
		m.approvalRequested(e)
	case *proto.ToolStarted:
		m.toolStarted(e)
	case *proto.ToolProgress:
		it := m.toolItem(e.CallID, "")
		it.progress = e.Text
		if it.state == toolAwaiting && (m.approval == nil || m.approval.callID != e.CallID) {
			// A running call's nested approval (a delegated agent's
			// step) was answered and the call goes on.
			it.state = toolRunning
		}
		it.touch()
	case *proto.ToolCompleted:
		m.callMoved(e.CallID)
		m.toolCompleted(e)
	case *proto.HookRan:
		m.hookRan(e)
	case *proto.JobReported:
		m.addItem(&item{kind: kindNotice, text: jobNotice(e)})
	case *proto.TurnCompleted:
		m.turnCompleted(e)
	case *proto.TurnCancelled:
		m.turnEnded()
		m.answered = nil
		m.finishOpenTools(toolCancelled)
		m.addItem(&item{kind: kindNotice, text: cancelledNote})
	case *proto.TurnFailed:
		m.turnEnded()
		m.finishOpenTools(toolCancelled)
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("turn failed (%s): %s", e.Code, e.Message)})
	default:
		return nil, false
	}
	return nil, true
}

// applySession shows the events about the session and its context, and
// the answers to the TUI's own requests.
func (m *Model) applySession(ev proto.Event) {
	switch e := ev.(type) {
	case *proto.ApprovalGrantsReply:
		m.grantsListed(e)
	case *proto.ContextCompacted:
		m.compacted++
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("context compacted: %s → %s tokens, %d earlier messages summarised",
			tokens(e.BeforeTokens), tokens(e.AfterTokens), e.RemovedMessages)})
		m.usage.InputTokens, m.haveUsage = int64(e.AfterTokens), true
	case *proto.SessionTrimmed:
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("history trimmed: %d oldest messages dropped (%s kept)", e.RemovedMessages, byteSize(e.HistoryBytes))})
	case *proto.SessionCleared:
		m.sessionCleared()
	case *proto.SessionClosed:
		m.addItem(&item{kind: kindNotice, text: "session closed by the server"})
	case *proto.SessionConfigured:
		if e.RequestID != "" && e.RequestID == m.configureReq {
			m.configured(e)
		} else {
			// Another client changed the model: the status line follows.
			m.session.Model, m.session.ContextMaxTokens = e.Model, e.ContextMaxTokens
		}
	case *proto.ModelsListed:
		if e.RequestID != "" && e.RequestID == m.modelsReq {
			m.openModels(e)
		}
	case *proto.CommandsListed:
		m.commandsListed(e)
	case *proto.SessionCompacted:
		m.compactedOnRequest(e)
	case *proto.SessionUndone:
		m.undone(e)
	case *proto.SessionStarted:
		if e.RequestID != "" && e.RequestID == m.newReq {
			m.newStarted(e)
		}
	case *proto.Error:
		if !m.commandError(e) {
			m.requestError(e)
		}
	}
}

// toolStarted shows a call that runs: its summary and diff (unless the
// approval showed them), the grant or rule that let it run, and the
// grant or rule its approval added.
func (m *Model) toolStarted(e *proto.ToolStarted) {
	it := m.toolItem(e.CallID, e.Name)
	it.state = toolRunning
	if !it.asked {
		it.summary = strings.Trim(e.Summary, "\n")
	}
	if e.Diff != nil {
		it.diff = e.Diff
	}
	it.granted = e.GrantID != ""
	if e.Rule != nil {
		it.rule = ruleText(*e.Rule)
	}
	it.touch()
	m.callMoved(e.CallID)
	if e.Granted != nil && e.Granted.Decision != "" {
		// The answer saved a rule ("always (save rule)").
		m.addItem(&item{kind: kindNotice, text: "saved rule: " + ruleText(*e.Granted) + " · /approvals lists rules"})
	} else if e.Granted != nil {
		// The answer added a session grant: said live and on a
		// resume alike, from the stored event.
		m.addItem(&item{kind: kindNotice, text: "allowed for this session: " + grantText(*e.Granted) + " · /approvals lists and revokes grants"})
	}
}

// turnCompleted ends a turn: its spend, and the context it leaves.
func (m *Model) turnCompleted(e *proto.TurnCompleted) {
	m.turnEnded()
	if e.NotStored {
		m.addItem(&item{kind: kindError, text: notStoredNote})
	}
	if e.Usage != nil {
		m.usage, m.haveUsage = *e.Usage, true
		ts := turnSpend{id: e.TurnID, usage: *e.Usage}
		if k := len(m.st.turns); k > 0 && m.st.turns[k-1].id == e.TurnID {
			ts.n, ts.prompt = m.st.turns[k-1].n, m.st.turns[k-1].prompt
		}
		m.spend.turnDone(ts)
	}
	if e.ContextTokens > 0 {
		// The server's estimate of the context is what compaction goes
		// by; a turn's usage sums all of its requests and overstates it.
		m.usage.InputTokens, m.haveUsage = int64(e.ContextTokens), true
	}
}

// sessionCleared empties the transcript of a session started afresh.
func (m *Model) sessionCleared() {
	m.tr.reset()
	m.streaming, m.scroll, m.haveUsage, m.usage = nil, 0, false, proto.Usage{}
	m.thinking, m.turnThinking = nil, nil
	m.anchor = nil
	m.render.expanded = nil
	m.addItem(&item{kind: kindNotice, text: "conversation cleared; the session starts afresh"})
}

// notStoredNote marks a turn the server could not save (its session
// database is gone): it is in this session's memory only.
const notStoredNote = "this turn was not saved: the session database is gone; the session goes on in memory until it closes — restart the daemon (scv stop, scv start) to save again"

// cancelledNote marks a cancelled turn: the server keeps it in the
// history as interrupted (its prompt, the calls that ran and their
// results, and the note "[interrupted by the user]"), so the model knows
// what its tools changed.
const cancelledNote = "turn cancelled — kept in the model's context as interrupted: it sees this prompt, the calls that ran and their results, with the note [interrupted by the user]; files its tools changed stay changed"

func (m *Model) turnStarted(ev *proto.TurnStarted) tea.Cmd {
	m.turnID, m.turnStart = ev.TurnID, m.now()
	m.streaming = nil
	// The server starts prompts in the order it got them.
	if len(m.pending) > 0 {
		p := m.pending[0]
		m.pending = m.pending[1:]
		m.addItem(&item{kind: kindUser, text: termtext.Block(p.text), mentions: ev.Mentions})
		if p.chips != "" {
			m.addItem(&item{kind: kindNotice, text: p.chips})
		}
		n := 1
		if k := len(m.st.turns); k > 0 {
			n = m.st.turns[k-1].n + 1
		}
		m.st.turns = append(m.st.turns, turnRef{id: ev.TurnID, n: n, prompt: p.text})
	}
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tick()
}

func (m *Model) assistantItem() *item {
	if m.streaming == nil {
		m.streaming = m.addItem(&item{kind: kindAssistant, streaming: true})
	}
	return m.streaming
}

func (m *Model) assistantDone(ev *proto.AssistantCompleted) {
	it := m.streaming
	m.streaming = nil
	content := ev.Content
	if it == nil {
		if content == "" {
			return
		}
		it = m.addItem(&item{kind: kindAssistant})
	}
	if content != "" {
		it.text = content
	}
	it.streaming = false
	it.touch()
}

// toolItem finds the row of a call, creating one if the proposal was missed
// (or evicted).
func (m *Model) toolItem(callID, name string) *item {
	if it, ok := m.tr.tools[callID]; ok {
		return it
	}
	return m.addItem(&item{kind: kindTool, callID: callID, name: name})
}

func (m *Model) approvalRequested(ev *proto.ApprovalRequested) {
	it := m.toolItem(ev.CallID, ev.Name)
	it.state, it.asked = toolAwaiting, true
	it.touch()
	name := ev.Name
	if name == "" {
		name = it.name
	}
	it.diff = ev.Diff
	m.approval = &approvalReq{id: ev.ApprovalID, callID: ev.CallID, name: name, risk: ev.Risk, cwd: ev.Cwd, summary: ev.Summary,
		diff: ev.Diff, grant: ev.Grant, reason: ev.Reason}
	m.answered = nil
	m.layout()
}

// callMoved forgets the answered approval of a call that went on: the
// answer was taken.
func (m *Model) callMoved(callID string) {
	if a := m.answered; a != nil && a.req.callID == callID {
		m.answered = nil
	}
}

func (m *Model) toolCompleted(ev *proto.ToolCompleted) {
	it := m.toolItem(ev.CallID, ev.Name)
	switch {
	case ev.Success:
		it.state = toolDone
	case ev.Error == proto.ToolDenied:
		it.state = toolDenied
	case ev.Error == proto.ToolCancelled:
		it.state = toolCancelled
	default:
		it.state, it.errKind = toolFailed, ev.Error
	}
	it.progress = ""
	var cut bool
	// The output may be JSON whose strings decode to control characters
	// again, so what is shown is made visible after decoding.
	text, notes := displayOutput(ev.Output)
	it.output, cut = boundOutput(termtext.Block(text))
	for i := range notes {
		notes[i] = termtext.Line(notes[i])
	}
	it.notes = notes
	it.truncated = cut || ev.Truncated
	it.touch()
	if m.approval != nil && m.approval.callID == ev.CallID {
		m.approval = nil
		m.layout()
	}
}

// turnEnded closes what a turn's terminal event ends, whichever it is.
func (m *Model) turnEnded() {
	if m.turnID != "" {
		m.lastTurn = m.now().Sub(m.turnStart)
	}
	m.turnID = ""
	m.at.stale = true // the turn's tools may have added or removed files
	m.collapseReasoning()
	if m.streaming != nil {
		m.streaming.streaming = false
		m.streaming.touch()
		m.streaming = nil
	}
	if m.approval != nil {
		m.approval = nil
		m.layout()
	}
}

func (m *Model) finishOpenTools(s toolState) {
	for _, it := range m.tr.tools {
		if !it.state.finished() {
			it.state = s
			it.touch()
		}
	}
}

func (m *Model) requestError(ev *proto.Error) {
	if m.quiet[ev.RequestID] {
		delete(m.quiet, ev.RequestID)
		switch ev.Code {
		case proto.ErrTurnNotFound:
			return // the turn ended before the cancel arrived
		case proto.ErrApprovalNotFound:
			// The approval ended before the cancel arrived; if its turn
			// still runs, cancel that instead.
			m.answered = nil
			if m.turnID != "" {
				m.cancelTurn()
			}
			return
		}
	}
	if a := m.answered; a != nil && a.requestID == ev.RequestID {
		m.answered = nil
		if ev.Code == proto.ErrInvalidRequest && m.approval == nil && m.turnID != "" {
			// The server refused the answer and still waits for one.
			m.approval = a.req
			m.layout()
			if it, ok := m.tr.tools[a.req.callID]; ok {
				it.state = toolAwaiting
				it.touch()
			}
		}
	}
	for i, p := range m.pending {
		if p.requestID == ev.RequestID {
			m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
			break
		}
	}
	text := fmt.Sprintf("error (%s): %s", ev.Code, ev.Message)
	if ev.Fatal {
		text += " — the server ends the connection"
	}
	m.addItem(&item{kind: kindError, text: text})
}

// tokens formats a token count compactly (1234 → 1.2k, 12345 → 12k).
func tokens[T int | int64](n T) string { return shortCount(int64(n), 10_000) }

// shortCount is n as is below a thousand, with one decimal in thousands
// (1.2k) up to wholeK, whole thousands (12k) from there to a million, and
// millions with one decimal (1.2M).
func shortCount(n, wholeK int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= wholeK:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// hookRan shows a hook run that changed something or failed; a hook that
// only ran (a notification, an allow) stays quiet.
func (m *Model) hookRan(e *proto.HookRan) {
	what := e.Event
	if e.Tool != "" {
		what += " " + e.Tool
	}
	switch e.Outcome {
	case proto.HookOK:
		return
	case proto.HookFailed:
		text := fmt.Sprintf("hook %s (%s) failed after %d ms: %s", e.Hook, what, e.DurationMS, e.Reason)
		if e.Stderr != "" {
			text += "\n" + e.Stderr
		}
		m.addItem(&item{kind: kindError, text: text})
	default:
		text := fmt.Sprintf("hook %s (%s): %s", e.Hook, what, e.Outcome)
		if e.Reason != "" {
			text += ": " + e.Reason
		}
		m.addItem(&item{kind: kindNotice, text: text})
	}
}
