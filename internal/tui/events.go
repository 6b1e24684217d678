package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// handleEvent applies one server event to the view state.
func (m *Model) handleEvent(ev proto.Event) tea.Cmd {
	ev = visibleEvent(ev)
	if ev.SessionID != "" && m.session.SessionID != "" && ev.SessionID != m.session.SessionID {
		return nil
	}
	switch ev.Type {
	case proto.EventTurnStarted:
		return m.turnStarted(ev)
	case proto.EventQueueEnqueued:
		for i := range m.pending {
			if m.pending[i].requestID == ev.RequestID {
				m.pending[i].queued = true
			}
		}
	case proto.EventAssistantReasoning:
		if ev.Content != nil && *ev.Content != "" {
			m.addReasoning(*ev.Content)
		}
	case proto.EventAssistantDelta:
		if ev.Content != nil && *ev.Content != "" {
			m.endReasoning()
			it := m.assistantItem()
			it.text += *ev.Content
			it.touch()
		}
	case proto.EventAssistantComplete:
		m.endReasoning()
		m.assistantDone(ev)
	case proto.EventToolProposed:
		m.endReasoning()
		m.streaming = nil
		m.addItem(&item{kind: kindTool, callID: ev.CallID, name: ev.Name, args: argSummary(ev.Arguments)})
	case proto.EventApprovalRequested:
		m.approvalRequested(ev)
	case proto.EventToolStarted:
		it := m.toolItem(ev)
		it.state = toolRunning
		if !it.asked {
			it.summary = strings.Trim(ev.Summary, "\n")
		}
		it.touch()
	case proto.EventToolProgress:
		it := m.toolItem(ev)
		it.progress = ev.Text
		it.touch()
	case proto.EventToolCompleted:
		m.toolCompleted(ev)
	case proto.EventTurnCompleted, proto.EventTurnCancelled, proto.EventTurnFailed:
		m.turnEnded(ev)
	case proto.EventContextCompacted:
		m.compacted++
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("context compacted: %s → %s tokens, %d earlier messages summarised",
			tokens(deref(ev.BeforeTokens)), tokens(deref(ev.AfterTokens)), deref(ev.RemovedMessages))})
		if ev.AfterTokens != nil {
			m.usage.InputTokens, m.haveUsage = int64(*ev.AfterTokens), true
		}
	case proto.EventSessionTrimmed:
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("history trimmed: %d oldest messages dropped (%s kept)", deref(ev.RemovedMessages), byteSize(deref(ev.HistoryBytes)))})
	case proto.EventSessionCleared:
		m.tr.reset()
		m.streaming, m.scroll, m.haveUsage, m.usage = nil, 0, false, proto.Usage{}
		m.thinking, m.turnThinking = nil, nil
		m.anchor = nil
		m.render.expanded = nil
		m.addItem(&item{kind: kindNotice, text: "conversation cleared; the session starts afresh"})
	case proto.EventSessionClosed:
		m.addItem(&item{kind: kindNotice, text: "session closed by the server"})
	case proto.EventError:
		m.requestError(ev)
	}
	return nil
}

func (m *Model) turnStarted(ev proto.Event) tea.Cmd {
	m.turnID, m.turnStart = ev.TurnID, m.now()
	m.streaming = nil
	// The server starts prompts in the order it got them.
	if len(m.pending) > 0 {
		p := m.pending[0]
		m.pending = m.pending[1:]
		m.addItem(&item{kind: kindUser, text: termtext.Block(p.text)})
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

func (m *Model) assistantDone(ev proto.Event) {
	it := m.streaming
	m.streaming = nil
	content := deref(ev.Content)
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
func (m *Model) toolItem(ev proto.Event) *item {
	if it, ok := m.tr.tools[ev.CallID]; ok {
		return it
	}
	return m.addItem(&item{kind: kindTool, callID: ev.CallID, name: ev.Name})
}

func (m *Model) approvalRequested(ev proto.Event) {
	it := m.toolItem(ev)
	it.state, it.asked = toolAwaiting, true
	it.touch()
	name := ev.Name
	if name == "" {
		name = it.name
	}
	m.approval = &approvalReq{id: ev.ApprovalID, callID: ev.CallID, name: name, risk: ev.Risk, cwd: ev.Cwd, summary: ev.Summary}
	m.layout()
}

func (m *Model) toolCompleted(ev proto.Event) {
	it := m.toolItem(ev)
	switch {
	case ev.Success != nil && *ev.Success:
		it.state = toolDone
	case ev.Error == "denied":
		it.state = toolDenied
	case ev.Error == "cancelled":
		it.state = toolCancelled
	default:
		it.state, it.errKind = toolFailed, ev.Error
	}
	it.progress = ""
	var cut bool
	// The output may be JSON whose strings decode to control characters
	// again, so what is shown is made visible after decoding.
	text, notes := displayOutput(deref(ev.Output))
	it.output, cut = boundOutput(termtext.Block(text))
	for i := range notes {
		notes[i] = termtext.Line(notes[i])
	}
	it.notes = notes
	it.truncated = cut || (ev.Truncated != nil && *ev.Truncated)
	it.touch()
	if m.approval != nil && m.approval.callID == ev.CallID {
		m.approval = nil
		m.layout()
	}
}

func (m *Model) turnEnded(ev proto.Event) {
	if m.turnID != "" {
		m.lastTurn = m.now().Sub(m.turnStart)
	}
	m.turnID = ""
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
	switch ev.Type {
	case proto.EventTurnCompleted:
		if ev.Usage != nil {
			m.usage, m.haveUsage = *ev.Usage, true
			m.totalUsage += ev.Usage.TotalTokens
		}
		if ev.ContextTokens != nil {
			// The server's estimate of the context is what compaction goes
			// by; a turn's usage sums all of its requests and overstates it.
			m.usage.InputTokens, m.haveUsage = int64(*ev.ContextTokens), true
		}
	case proto.EventTurnCancelled:
		m.finishOpenTools(toolCancelled)
		m.addItem(&item{kind: kindNotice, text: "turn cancelled"})
	case proto.EventTurnFailed:
		m.finishOpenTools(toolCancelled)
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("turn failed (%s): %s", ev.Code, ev.Message)})
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

func (m *Model) requestError(ev proto.Event) {
	for i, p := range m.pending {
		if p.requestID == ev.RequestID {
			m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
			break
		}
	}
	text := fmt.Sprintf("error (%s): %s", ev.Code, ev.Message)
	if ev.Fatal != nil && *ev.Fatal {
		text += " — the server ends the connection"
	}
	m.addItem(&item{kind: kindError, text: text})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// tokens formats a token count compactly (1234 → 1.2k).
func tokens[T int | int64](n T) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
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
