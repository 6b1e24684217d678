package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/commands"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// Custom commands and manual compaction (docs/protocol.md):
// commands.list, turn.start with a command, session.compact.

func (s *session) commandDirs() commands.Dirs {
	return commands.Dirs{User: s.info.UserCommands, Workspace: s.info.Cwd}
}

// commandsList answers with the session's custom commands; every skipped
// file is logged too, so a user who wonders where a command went finds
// the reason in the daemon's log as well as in the client.
func (c *conn) commandsList(s *session, m *proto.CommandsList) {
	cmds, skipped := commands.List(s.commandDirs())
	ev := &proto.CommandsListed{Commands: []proto.CustomCommand{}}
	for _, cm := range cmds {
		ev.Commands = append(ev.Commands, proto.CustomCommand{Name: cm.Name, Description: cm.Description, Source: string(cm.Source)})
	}
	for _, sk := range skipped {
		c.srv.opts.Logger.Info("custom command skipped", "session", s.id, "file", sk.File, "reason", sk.Reason)
		ev.Skipped = append(ev.Skipped, proto.SkippedCommand{File: sk.File, Reason: sk.Reason})
	}
	c.reply(m.RequestID, ev, s)
}

// expandCommand makes m's prompt the text of the custom command it names;
// false when it refused the message (answered).
func (c *conn) expandCommand(s *session, m *proto.TurnStart) bool {
	invalid := func(msg string) bool {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "turn.start: "+msg, false)
		return false
	}
	switch {
	case m.Command == "":
		return invalid("arguments are given without a command")
	case m.Prompt != "":
		return invalid("give either prompt or command, not both")
	}
	cm, err := commands.Find(s.commandDirs(), m.Command)
	switch {
	case errors.Is(err, commands.ErrNotFound):
		return invalid(fmt.Sprintf("no custom command %q in %s or the workspace's %s; commands.list names them", m.Command, s.info.UserCommands, commands.WorkspaceDir))
	case err != nil:
		return invalid(fmt.Sprintf("custom command %q cannot be used: %v", m.Command, err))
	}
	m.Prompt = cm.Expand(m.Arguments)
	if strings.TrimSpace(m.Prompt) == "" {
		return invalid(fmt.Sprintf("custom command %q expands to an empty prompt", m.Command))
	}
	return true
}

// sessionCompact queues the compaction when the session is idle; it runs
// in the session's turn goroutine (compact), so a turn.start meanwhile
// waits behind it.
func (c *conn) sessionCompact(s *session, m *proto.SessionCompact) {
	if len(m.Focus) > proto.MaxCompactFocusBytes {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("session.compact: focus is %d bytes, over the limit of %d; shorten it", len(m.Focus), proto.MaxCompactFocusBytes), false)
		return
	}
	s.mu.Lock()
	busy := s.active != "" || len(s.queue) > 0
	if !busy {
		s.queue = append(s.queue, pending{turnID: "c_" + uuid.NewString()[:12], requestID: m.RequestID, prompt: m.Focus, compact: true})
	}
	s.mu.Unlock()
	if busy {
		c.reqError(m.RequestID, proto.ErrTurnActive, "a turn is running or queued; /compact works when the session is idle (wait for it, or cancel it with Ctrl+C in the TUI)", false)
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// compact summarises the history, stores the summary as the whole history
// (a stored session) and only then makes it the session's history, so the
// database and the session never disagree. It returns the answer, which
// the turn loop sends only after the session is idle again: a client that
// starts a turn on seeing session.compacted finds no compaction running.
func (c *conn) compact(ctx context.Context, s *session, p pending) (answer func()) {
	res, err := s.agent.Compact(ctx, p.prompt)
	if err != nil {
		code, msg := proto.ErrCompactFailed, "the conversation was not compacted: "+err.Error()
		if fc, fm := agent.FailureCode(err); fc != "" {
			msg = "the conversation was not compacted: " + fm
			if fc == proto.FailContext {
				code = proto.ErrInvalidRequest
			}
		}
		if errors.Is(err, agent.ErrNothingToCompact) {
			code, msg = proto.ErrInvalidRequest, "nothing to compact: the conversation is empty"
		}
		return func() { c.reqError(p.requestID, code, msg, false) }
	}
	if st := c.srv.opts.Store; st != nil && !s.unstored() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
		err := st.UpdateHistory(sctx, s.id, store.HistoryUpdate{Replace: true, Append: []json.RawMessage{res.Note}})
		cancel()
		if err != nil {
			return func() {
				c.reqError(p.requestID, proto.ErrStore, fmt.Sprintf("the conversation was not compacted: the session database refused the new history: %v", err), false)
			}
		}
	}
	if err := s.agent.LoadHistory([]json.RawMessage{res.Note}); err != nil {
		return func() {
			c.reqError(p.requestID, proto.ErrInternal, "the conversation was not compacted: "+err.Error(), false)
		}
	}
	return func() {
		c.reply(p.requestID, &proto.SessionCompacted{BeforeTokens: res.Before, AfterTokens: res.After, RemovedMessages: res.Removed, Usage: res.Usage}, s)
	}
}
