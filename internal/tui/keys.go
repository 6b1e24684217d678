package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// helpText is what /help shows.
const helpText = `Keys: Enter send (queued while a turn runs) · Ctrl+J newline · Esc cancel the turn (denies a shown approval) · Ctrl+C clear input, else cancel the turn, else quit · PageUp/PageDown scroll · Up/Down prompt history · Ctrl+O expand/collapse the latest tool output · y/n answer an approval, Up/Down scroll its summary when it is longer than the panel.
Commands: /help this text · /clear start the conversation afresh (idle only) · /context context use · /quit leave.`

// handleKey routes a key press: approval panel first, then global keys,
// then the composer.
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if m.approval != nil {
		switch s {
		case "y", "Y":
			m.resolveApproval(true)
			return nil
		case "n", "N":
			m.resolveApproval(false)
			return nil
		case "up", "down":
			// A summary longer than the panel scrolls; the approver
			// can read every line before answering.
			d := 1
			if s == "up" {
				d = -1
			}
			if m.scrollApproval(d) {
				return nil
			}
		}
	}
	switch s {
	case "enter":
		return m.submit()
	case "esc":
		m.cancelTurn()
		return nil
	case "ctrl+c":
		switch {
		case m.composer.Value() != "":
			m.composer.Reset()
			m.histIdx = len(m.history)
			m.layout()
		case m.turnID != "" && m.conn == connected:
			m.cancelTurn()
		default:
			m.quitting = true
			return tea.Quit
		}
		return nil
	case "pgup":
		m.scroll += max(m.bodyHeight()-1, 1)
		return nil
	case "pgdown":
		m.scroll = max(m.scroll-max(m.bodyHeight()-1, 1), 0)
		return nil
	case "ctrl+o":
		m.toggleExpand()
		return nil
	case "up":
		if m.composer.AtFirstRow() && m.historyStep(-1) {
			return nil
		}
	case "down":
		if m.composer.AtLastRow() && m.historyStep(1) {
			return nil
		}
	}
	m.composer.Update(k)
	m.layout()
	return nil
}

func (m *Model) resolveApproval(ok bool) {
	a := m.approval
	m.approval = nil
	m.layout()
	m.sendMsg(&proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: m.nextRequestID()},
		SessionID: m.session.SessionID, ApprovalID: a.id, Approved: ok})
	if it, found := m.tr.tools[a.callID]; found && !ok {
		it.state = toolDenied
		it.touch()
	} else if found {
		it.state = toolPending
		it.touch()
	}
}

// cancelTurn denies a shown approval and cancels the running turn.
func (m *Model) cancelTurn() {
	if m.approval != nil {
		m.resolveApproval(false)
	}
	if m.turnID == "" {
		return
	}
	m.sendMsg(&proto.TurnCancel{Envelope: proto.Envelope{RequestID: m.nextRequestID()},
		SessionID: m.session.SessionID, TurnID: m.turnID})
}

func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.composer.Value())
	if text == "" {
		return nil
	}
	if cmd, ok := m.localCommand(text); ok {
		m.composer.Reset()
		m.layout()
		return cmd
	}
	if m.conn == disconnected {
		m.addItem(&item{kind: kindError, text: "not connected: start the daemon with `scv run` or `scv start` and run `scv` again"})
		return nil
	}
	if len(text) > proto.MaxPromptBytes {
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("prompt of %d bytes is over the %d-byte limit; shorten it", len(text), proto.MaxPromptBytes)})
		return nil
	}
	id := m.nextRequestID()
	if !m.sendMsg(&proto.TurnStart{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID, Prompt: text}) {
		return nil
	}
	m.pending = append(m.pending, pendingPrompt{requestID: id, text: text})
	m.remember(text)
	m.composer.Reset()
	m.scroll = 0
	m.layout()
	return nil
}

// localCommand runs /help, /clear, /context and /quit; other text,
// including other slash words, is a prompt.
func (m *Model) localCommand(text string) (tea.Cmd, bool) {
	switch text {
	case "/help":
		m.addItem(&item{kind: kindNotice, text: helpText})
	case "/quit":
		m.quitting = true
		return tea.Quit, true
	case "/context":
		m.addItem(&item{kind: kindNotice, text: m.contextReport()})
	case "/clear":
		switch {
		case m.conn == disconnected:
			m.addItem(&item{kind: kindError, text: "not connected; nothing to clear"})
		case m.turnID != "" || len(m.pending) > 0:
			m.addItem(&item{kind: kindError, text: "a turn is running; /clear works when the session is idle (Esc cancels the turn)"})
		default:
			m.sendMsg(&proto.SessionClear{Envelope: proto.Envelope{RequestID: m.nextRequestID()}, SessionID: m.session.SessionID})
		}
	default:
		return nil, false
	}
	m.remember(text)
	m.scroll = 0
	return nil, true
}

func (m *Model) contextReport() string {
	used := "unknown until the first turn completes"
	if m.haveUsage {
		used = tokens(m.usage.InputTokens) + " tokens in context"
		if m.session.ContextMaxTokens > 0 {
			used += fmt.Sprintf(" (%d%% of %s)", pct(m.usage.InputTokens, m.session.ContextMaxTokens), tokens(m.session.ContextMaxTokens))
		}
	}
	return fmt.Sprintf("context: model %s · window %s tokens · %s · %s tokens used this session · %d compactions",
		orDash(m.session.Model), tokens(m.session.ContextMaxTokens), used, tokens(m.totalUsage), m.compacted)
}

func pct(n int64, of int) int64 {
	if of <= 0 {
		return 0
	}
	return n * 100 / int64(of)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// remember adds a submitted prompt to the history (no repeats in a row).
func (m *Model) remember(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		if len(m.history) > 1000 {
			m.history = m.history[len(m.history)-1000:]
		}
	}
	m.histIdx, m.draft = len(m.history), ""
}

// historyStep moves through prompt history; false when there is nowhere
// to go (the key then moves the cursor).
func (m *Model) historyStep(d int) bool {
	i := m.histIdx + d
	if i < 0 || i > len(m.history) || len(m.history) == 0 {
		return false
	}
	if m.histIdx == len(m.history) {
		m.draft = m.composer.Value()
	}
	m.histIdx = i
	if i == len(m.history) {
		m.composer.SetValue(m.draft)
	} else {
		m.composer.SetValue(m.history[i])
	}
	m.layout()
	return true
}

func (m *Model) toggleExpand() {
	it := m.tr.latestOutput()
	if it == nil {
		return
	}
	if m.render.expanded == it {
		m.render.expanded = nil
	} else {
		m.render.expanded = it
	}
}
