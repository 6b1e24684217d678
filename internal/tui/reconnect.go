package tui

import (
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Reconnecting (docs/tui.md): when the daemon's connection ends (scv stop,
// a restart, a crash) the TUI keeps its transcript and dials again with a
// bounded backoff; Esc stops trying. Once a connection is back it offers
// to continue the session shown (session.resume) with Enter.

// maxRedials bounds the attempts of one reconnection (about half a
// minute with redialDelay); Enter on an empty composer starts another.
const maxRedials = 10

// redialDelay is the wait before attempt n (0-based): 250 ms doubling,
// at most 5 s.
func redialDelay(n int) time.Duration {
	d := 250 * time.Millisecond
	for range n {
		d *= 2
		if d >= 5*time.Second {
			return 5 * time.Second
		}
	}
	return d
}

// redialTickMsg says the wait before an attempt is over; redialMsg is the
// attempt's result. gen tells a stopped reconnection's messages apart.
type redialTickMsg struct{ gen int }

type redialMsg struct {
	gen    int
	sender Sender
	err    error
}

// redial is the state of reconnecting.
type redial struct {
	gen     int  // bumped when a reconnection starts or stops
	attempt int  // attempts made in this reconnection
	due     bool // Update schedules the next attempt
	// offer says a new connection is up and the session shown is not yet
	// resumed on it: Enter resumes it.
	offer bool
}

// startRedial begins reconnecting (when the TUI can).
func (m *Model) startRedial() bool {
	if m.cfg.Redial == nil {
		return false
	}
	m.conn = reconnecting
	m.rd.gen++
	m.rd.attempt, m.rd.due = 0, true
	return true
}

// stopRedial stops reconnecting (Esc).
func (m *Model) stopRedial() {
	m.rd.gen++
	m.rd.due = false
	m.conn = disconnected
	m.addItem(&item{kind: kindNotice, text: "stopped reconnecting; Enter on an empty composer tries again, Ctrl+C quits"})
}

// redialCmd waits before the next attempt.
func (m *Model) redialCmd() tea.Cmd {
	gen := m.rd.gen
	return tea.Tick(m.delay(m.rd.attempt), func(time.Time) tea.Msg { return redialTickMsg{gen: gen} })
}

// dialCmd makes one attempt.
func (m *Model) dialCmd(gen int) tea.Cmd {
	dial := m.cfg.Redial
	return func() tea.Msg {
		s, err := dial()
		return redialMsg{gen: gen, sender: s, err: err}
	}
}

// redialed takes an attempt's result.
func (m *Model) redialed(r redialMsg) {
	if r.gen != m.rd.gen || m.conn != reconnecting {
		if c, ok := r.sender.(io.Closer); ok {
			c.Close() // a stopped reconnection's late connection
		}
		return
	}
	if r.err != nil {
		m.rd.attempt++
		if m.rd.attempt < maxRedials {
			m.rd.due = true
			return
		}
		m.conn = disconnected
		m.addItem(&item{kind: kindError, text: "the daemon did not come back. Start it with `scv start` (background) or `scv run` (foreground, in another terminal), then press Enter on an empty composer to reconnect; Ctrl+C quits."})
		return
	}
	m.send, m.conn, m.connErr = r.sender, connected, nil
	m.rd.offer = true
	m.addItem(&item{kind: kindNotice, text: "reconnected to the daemon. Enter continues this session (its stored transcript is redrawn; a prompt typed first is sent to it); /new starts a fresh one."})
}

// resumeAfterReconnect resumes the session shown on the new connection;
// prompt, when set, is sent as its next turn once it is open.
func (m *Model) resumeAfterReconnect(prompt string) {
	m.rd.offer = false
	id := m.nextRequestID()
	r := m.cfg.Client.resume(id, m.session.SessionID)
	// The session goes on as shown: a model chosen with /model since it
	// opened (stored with it) is not replaced by the client's --model.
	r.Model = ""
	if m.sendMsg(r) {
		m.st.resumeReq, m.st.forkPrompt = id, prompt
	}
}
