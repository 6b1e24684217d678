package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// A TUI that has to start the daemon draws its whole screen at once and
// attaches meanwhile: the header names the workspace and the configured
// model, the composer takes text, and the status line says it connects.
// Prompts entered before the session exists are kept, in order, and sent
// as soon as it does; commands wait for it (they act on a session). The
// attach runs as a command of the program (Config.Attach), and its result
// arrives as an AttachedMsg.

// AttachedMsg is the end of the first attach: the connection and the
// session it started, or why there is none.
type AttachedMsg struct {
	Sender  Sender
	Session proto.SessionStarted
	// Notice is shown in the transcript, as Config.Notice is.
	Notice string
	Err    error
}

// stillConnecting refuses a command before the session exists.
const stillConnecting = "still connecting to the daemon: commands run once the session has started (/help and /quit work now)"

// maxEarlyPrompts bounds the prompts kept before the session exists.
const maxEarlyPrompts = 8

// attachCmd runs the first attach, off the program's goroutine.
func (m *Model) attachCmd() tea.Cmd {
	attach := m.cfg.Attach
	return func() tea.Msg { return attach() }
}

// earlyPrompt is a prompt entered before the session existed, with the
// images attached to it.
type earlyPrompt struct {
	text   string
	images []attachedImage
}

// attached takes the session the first attach started: its events are
// pumped from now on (Config.Adopt), so none arrives before the session
// is known; the prompts kept meanwhile are sent, in order, each with its
// own images and checked against the session's prompt limit. A failed
// attach ends the TUI with its error (the kept prompts are then in
// Result.Unsent); so does one that arrives after the user quit.
func (m *Model) attached(msg AttachedMsg) tea.Cmd {
	if m.conn != connecting || m.quitting {
		return nil
	}
	if msg.Err != nil {
		m.attachErr = msg.Err
		m.quitting = true
		return tea.Quit
	}
	m.session, m.send, m.conn = *visibleEvent(&msg.Session), msg.Sender, connected
	if m.cfg.Adopt != nil {
		m.cfg.Adopt(msg.Sender)
	}
	if msg.Notice != "" {
		m.addItem(&item{kind: kindNotice, text: msg.Notice})
	}
	m.requestCommands()
	early, current := m.early, m.images
	m.early = nil
	for _, ep := range early {
		if limit := m.promptLimit(); len(ep.text) > limit {
			m.addItem(&item{kind: kindError, text: fmt.Sprintf("not sent: a kept prompt of %d bytes is over the %d-byte limit (session.max_prompt_bytes); it is back in the composer to shorten", len(ep.text), limit)})
			if m.composer.Value() == "" {
				m.composer.SetValue(ep.text)
			}
			continue
		}
		m.images = ep.images
		if !m.sendTurn(ep.text) {
			m.addItem(&item{kind: kindError, text: "not sent (the connection ended): " + ep.text})
		}
	}
	m.images = current
	m.layout()
	return nil
}

// keepEarly keeps a prompt entered before the session exists, with the
// images attached so far; false when maxEarlyPrompts are already kept.
func (m *Model) keepEarly(text string) bool {
	if len(m.early) >= maxEarlyPrompts {
		m.addItem(&item{kind: kindError, text: "still connecting: at most 8 prompts are kept until the session starts"})
		return false
	}
	m.early = append(m.early, earlyPrompt{text: text, images: m.images})
	m.images = nil
	m.remember(text)
	m.addItem(&item{kind: kindNotice, text: "kept until the session starts: " + text})
	return true
}

// unsent are the kept prompts the session never got (the attach failed,
// or the user quit first).
func (m *Model) unsent() []string {
	var out []string
	for _, ep := range m.early {
		out = append(out, ep.text)
	}
	return out
}

// AttachErr is why the first attach failed (nil when it did not).
func (m *Model) AttachErr() error { return m.attachErr }
