package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// handle processes one client line and reports whether the connection must
// end (a fatal error). The envelope is decoded first, then the whole line
// into the message type it names; each type has its case below.
func (c *conn) handle(line []byte) bool {
	var env proto.Envelope
	if err := json.Unmarshal(line, &env); err != nil {
		c.reqError("", proto.ErrInvalidJSON, fmt.Sprintf("invalid JSON: %v", err), false)
		return false
	}
	if env.Type == "" {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, "message has no type", false)
		return false
	}
	if !c.initialized && env.Type != proto.TypeInitialize {
		c.reqError(env.RequestID, proto.ErrNotInitialized, fmt.Sprintf("send initialize before %s", env.Type), false)
		return false
	}
	msg := proto.NewMessage(env.Type)
	if msg == nil {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("unknown message type %q", env.Type), false)
		return false
	}
	if err := json.Unmarshal(line, msg); err != nil {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("invalid %s: %v", env.Type, err), false)
		return false
	}
	if m, ok := msg.(*proto.Initialize); ok {
		return c.initialize(m)
	}
	if m, ok := msg.(proto.SessionMessage); ok {
		s := c.session(env.RequestID, m.Target())
		if s == nil {
			return false
		}
		c.handleSession(s, m)
		return false
	}
	if c.storedMessage(msg) {
		return false
	}
	switch m := msg.(type) {
	case *proto.SessionStart:
		c.sessionStart(m)
	case *proto.DaemonStatusRequest:
		if c.srv.opts.Status == nil {
			c.reqError(m.RequestID, proto.ErrUnsupported, "daemon.status is served only on the daemon socket", false)
			return false
		}
		st := c.srv.opts.Status()
		c.reply(m.RequestID, &proto.DaemonStatusReply{Status: &st}, nil)
	case *proto.DaemonShutdown:
		if c.srv.opts.Shutdown == nil {
			c.reqError(m.RequestID, proto.ErrUnsupported, "daemon.shutdown is served only on the daemon socket", false)
			return false
		}
		c.reply(m.RequestID, &proto.DaemonStatusReply{Message: "shutting down"}, nil)
		c.srv.opts.Shutdown()
	case *proto.DaemonReload, *proto.ClawbotSettings, *proto.ClawbotLogout:
		c.admin(m)
	default:
		c.srv.opts.Logger.Error("message type without a handler", "type", env.Type)
		c.reqError(m.Env().RequestID, proto.ErrInternal, fmt.Sprintf("%s has no handler in this server", env.Type), false)
	}
	return false
}

// admin runs a request about the daemon's components in its own goroutine
// (a reload joins components, which may take seconds) and answers it with
// daemon.status.
func (c *conn) admin(m proto.Message) {
	id := m.Env().RequestID
	if c.srv.opts.Admin == nil {
		c.reqError(id, proto.ErrUnsupported, m.MessageType()+" is served only on the daemon socket", false)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		st, err := c.srv.opts.Admin(c.ctx, m)
		if err != nil {
			c.reqError(id, proto.ErrInvalidRequest, err.Error(), false)
			return
		}
		c.reply(id, &proto.DaemonStatusReply{Status: &st}, nil)
	}()
}

// handleSession processes a message addressed to the open session s.
func (c *conn) handleSession(s *session, msg proto.SessionMessage) {
	switch m := msg.(type) {
	case *proto.TurnStart:
		c.turnStart(s, m)
	case *proto.TurnCancel:
		c.turnCancel(s, m)
	case *proto.ApprovalResolve:
		c.approvalResolve(s, m)
	case *proto.ApprovalGrantsRequest:
		c.reply(m.RequestID, &proto.ApprovalGrantsReply{Grants: s.agent.Grants(), Rules: s.agent.SavedRules()}, s)
	case *proto.ApprovalRevoke:
		c.approvalRevoke(s, m)
	case *proto.SessionClear:
		c.sessionClear(s, m)
	case *proto.SessionClose:
		c.sessionClose(s, m)
	case *proto.SessionConfigure:
		c.sessionConfigure(s, m)
	case *proto.ModelsList:
		c.modelsList(s, m)
	case *proto.SessionUndo:
		c.sessionUndo(s, m)
	case *proto.SessionSetMode:
		c.sessionSetMode(s, m)
	case *proto.CommandsList:
		c.commandsList(s, m)
	case *proto.SessionCompact:
		c.sessionCompact(s, m)
	default:
		c.srv.opts.Logger.Error("message type without a handler", "type", msg.MessageType())
		c.reqError(msg.Env().RequestID, proto.ErrInternal, fmt.Sprintf("%s has no handler in this server", msg.MessageType()), false)
	}
}

func (c *conn) initialize(m *proto.Initialize) bool {
	if c.initialized {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "already initialized", false)
		return false
	}
	if m.ProtocolVersion != proto.Version {
		c.reqError(m.RequestID, proto.ErrVersionMismatch, fmt.Sprintf("protocol version %d is not supported; this server speaks version %d", m.ProtocolVersion, proto.Version), true)
		return true
	}
	c.initialized = true
	c.reply(m.RequestID, &proto.Initialized{ProtocolVersion: proto.Version, Server: proto.Peer{Name: "scv", Version: c.srv.opts.Version}}, nil)
	return false
}

func (c *conn) sessionStart(m *proto.SessionStart) {
	cwd, err := paths.CanonicalDir(m.Cwd)
	if err != nil {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "cwd "+err.Error(), false)
		return
	}
	m.Cwd = cwd
	if m.DelegationDepth < 0 {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "delegation_depth must not be negative", false)
		return
	}
	if m.Origin == "" {
		m.Origin = proto.OriginStdio
	}
	if !validOrigin(m.Origin) {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("origin %q is not one of tui, exec, stdio, clawbot, acp", m.Origin), false)
		return
	}
	if !c.reserve(m.RequestID) {
		return
	}
	id := "s_" + uuid.NewString()[:12]
	ag, info, err := c.srv.opts.Factory.NewSession(c.ctx, id, SessionRequest{SessionStart: *m, Store: c.srv.opts.Store})
	if err != nil {
		c.srv.sessions.Add(-1)
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("cannot start a session: %v", err), false)
		return
	}
	c.srv.claim(id, m.Origin)
	s := newSession(id, ag, info)
	if c.srv.opts.Store != nil {
		// Stored with its first turn: a session nobody spoke in is not
		// kept (a TUI opened and closed leaves nothing to list).
		s.create = &store.NewSession{ID: id, Workspace: info.Cwd, Provider: info.Provider, Model: info.Model,
			WireAPI: info.WireAPI, BaseURL: info.BaseURL, Origin: store.Origin(m.Origin), DelegationDepth: info.DelegationDepth}
	}
	// session.started has seq 0, so it is not stamped like later events.
	c.attach(s, m.RequestID, &proto.SessionStarted{SessionID: id, Cwd: info.Cwd, Model: info.Model,
		ContextMaxTokens: info.ContextMaxTokens, Tools: info.Tools, MaxPromptBytes: info.promptLimit()})
}

// reserve checks both session bounds and takes a server-wide slot before a
// session is built (building one costs memory too); false when refused,
// which it answers.
func (c *conn) reserve(requestID string) bool {
	c.mu.Lock()
	open := len(c.sessions)
	c.mu.Unlock()
	if max := c.srv.opts.MaxSessionsPerConn; open >= max {
		c.reqError(requestID, proto.ErrLimit, fmt.Sprintf("this connection already has %d open sessions (protocol.max_sessions_per_connection = %d); close one of them first", open, max), false)
		return false
	}
	if max := c.srv.opts.MaxSessions; c.srv.sessions.Add(1) > int64(max) {
		c.srv.sessions.Add(-1)
		c.reqError(requestID, proto.ErrLimit, fmt.Sprintf("the server already has %d open sessions (protocol.max_sessions); quit a client that has one open, or try again later", max), false)
		return false
	}
	return true
}

// abandon gives back what a session being opened took before it failed:
// its slot, its claim and what the factory built.
func (c *conn) abandon(id string, info SessionInfo) {
	if info.Close != nil {
		info.Close()
	}
	c.srv.unclaim(id)
	c.srv.sessions.Add(-1)
}

// attach makes s an open session of the connection, sends the event that
// opens it (session.started or session.resumed, which carries seq itself)
// and starts its turn loop.
func (c *conn) attach(s *session, requestID string, opened proto.Event) {
	if s.info.MaxQueuedTurns == 0 {
		s.info.MaxQueuedTurns = c.srv.opts.MaxQueuedTurns
	}
	c.mu.Lock()
	c.sessions[s.id] = s
	c.mu.Unlock()
	c.srv.opened(s)
	if c.srv.opts.OnSessions != nil {
		c.srv.opts.OnSessions(1)
	}
	c.reply(requestID, opened, nil)
	c.sendMissed(s)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		s.run(c)
	}()
}

// session finds an open session of the connection; an unknown id is
// answered with session_not_found and gives nil.
func (c *conn) session(requestID, id string) *session {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s == nil {
		c.reqError(requestID, proto.ErrSessionNotFound, fmt.Sprintf("no session %q on this connection", id), false)
	}
	return s
}

// promptLimit is the session's prompt limit when its configuration
// changed it, 0 when it is the default (session.started leaves it out).
func (info SessionInfo) promptLimit() int {
	if info.MaxPromptBytes == proto.MaxPromptBytes {
		return 0
	}
	return info.MaxPromptBytes
}

// maxPrompt is the longest prompt the session takes.
func (s *session) maxPrompt() int {
	if s.info.MaxPromptBytes > 0 {
		return s.info.MaxPromptBytes
	}
	return proto.MaxPromptBytes
}

func (c *conn) turnStart(s *session, m *proto.TurnStart) {
	if m.Command != "" || m.Arguments != "" {
		if !c.expandCommand(s, m) {
			return
		}
	}
	switch {
	case m.Prompt == "":
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "prompt must not be empty", false)
		return
	case len(m.Prompt) > s.maxPrompt():
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("prompt is %d bytes, over the limit of %d (session.max_prompt_bytes); shorten it", len(m.Prompt), s.maxPrompt()), false)
		return
	}
	images, err := s.readImages(m.Images)
	if err != nil {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, err.Error()+"; the turn was not started", false)
		return
	}
	turnID := "t_" + uuid.NewString()[:12]
	queued, ok := s.enqueue(pending{turnID: turnID, requestID: m.RequestID, prompt: m.Prompt, images: images})
	switch {
	case !ok:
		max := max(s.info.MaxQueuedTurns, 0)
		c.reqError(m.RequestID, proto.ErrLimit, fmt.Sprintf("session %s already has %d queued turns (session.max_queued_turns = %d); wait for one to start, or cancel the running turn (Ctrl+C in the TUI)", s.id, max, max), false)
	case queued:
		c.reply(m.RequestID, &proto.QueueEnqueued{QueueID: turnID}, s)
	}
}

func (c *conn) turnCancel(s *session, m *proto.TurnCancel) {
	switch s.cancelTurn(m.TurnID) {
	case cancelActive:
		// turn.cancelled follows from the turn itself.
	case cancelQueued:
		ev := &proto.TurnCancelled{}
		ev.TurnID = m.TurnID
		c.reply(m.RequestID, ev, s)
	default:
		c.reqError(m.RequestID, proto.ErrTurnNotFound, fmt.Sprintf("no active or queued turn %q in session %s", m.TurnID, m.SessionID), false)
	}
}

func (c *conn) approvalResolve(s *session, m *proto.ApprovalResolve) {
	notFound := func() {
		c.reqError(m.RequestID, proto.ErrApprovalNotFound, fmt.Sprintf("no pending approval %q in session %s", m.ApprovalID, m.SessionID), false)
	}
	invalid := func(msg string) {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "approval.resolve: "+msg+"; the approval is still pending", false)
	}
	if m.CancelTurn {
		if m.Approved || m.Scope != "" || m.Reason != "" || m.Prefix != "" || m.Exact || m.Path != "" {
			invalid("cancel_turn denies the call: send it with approved false and no scope, prefix, exact, path or reason")
			return
		}
		// A pending approval belongs to the running turn, so cancelling
		// that turn while the approval is still pending denies the call
		// and stops the turn before its next model request.
		s.mu.Lock()
		cancel := s.cancel
		s.mu.Unlock()
		if !s.agent.CancelApproval(m.ApprovalID, cancel) {
			notFound()
		}
		return
	}
	if m.Scope != "" && m.Scope != proto.ScopeCall && m.Scope != proto.ScopeSession && m.Scope != proto.ScopeRule {
		invalid(fmt.Sprintf("scope %q is not %q, %q or %q", m.Scope, proto.ScopeCall, proto.ScopeSession, proto.ScopeRule))
		return
	}
	err := s.agent.Resolve(m.ApprovalID, answerOf(m))
	switch {
	case errors.Is(err, approval.ErrNotPending):
		notFound()
	case err != nil:
		invalid(err.Error())
	}
}

// answerOf is the one place where the wire's answer (approval.resolve)
// becomes an approval.Answer; every client's answer, the TUI's, ACP's
// session/request_permission outcome, the WeChat bridge's and scv exec's,
// reaches the broker through it.
func answerOf(m *proto.ApprovalResolve) approval.Answer {
	return approval.Answer{Approved: m.Approved, Session: m.Scope == proto.ScopeSession, Save: m.Scope == proto.ScopeRule,
		Prefix: m.Prefix, Exact: m.Exact, Path: m.Path, Reason: m.Reason}
}

func (c *conn) approvalRevoke(s *session, m *proto.ApprovalRevoke) {
	if !s.agent.Revoke(m.GrantID) {
		for _, r := range s.agent.SavedRules() {
			if r.GrantID == m.GrantID {
				c.reqError(m.RequestID, proto.ErrGrantNotFound, fmt.Sprintf("%s is a saved rule, not a session grant: remove its [[approvals.rules]] table from %s", m.GrantID, r.Source), false)
				return
			}
		}
		c.reqError(m.RequestID, proto.ErrGrantNotFound, fmt.Sprintf("no grant %q in session %s; /approvals in the TUI lists them", m.GrantID, m.SessionID), false)
		return
	}
	c.reply(m.RequestID, &proto.ApprovalGrantsReply{Grants: s.agent.Grants(), Rules: s.agent.SavedRules()}, s)
}

func (c *conn) sessionClear(s *session, m *proto.SessionClear) {
	var save func() error
	if st := c.srv.opts.Store; st != nil && !s.unstored() {
		save = func() error {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
			defer cancel()
			if err := st.SetTodos(ctx, s.id, nil); err != nil {
				return err
			}
			return st.UpdateHistory(ctx, s.id, store.HistoryUpdate{Replace: true})
		}
	}
	hadTodos := len(s.agent.Todos()) > 0
	switch err := s.clear(save); {
	case errors.Is(err, errBusy):
		c.reqError(m.RequestID, proto.ErrTurnActive, "a turn is active or queued; cancel it (Ctrl+C in the TUI) before /clear", false)
	case err != nil:
		c.reqError(m.RequestID, proto.ErrStore, fmt.Sprintf("the history was not cleared: the session database refused the change: %v", err), false)
	default:
		s.agent.SetTodos(nil)
		c.reply(m.RequestID, &proto.SessionCleared{}, s)
		if hadTodos {
			c.sendSession(s, &proto.TodoUpdated{})
		}
	}
}

func (c *conn) sessionClose(s *session, m *proto.SessionClose) {
	c.mu.Lock()
	delete(c.sessions, m.SessionID)
	c.mu.Unlock()
	s.shutdown()
	<-s.done
	s.release(c.srv)
	c.reply(m.RequestID, &proto.SessionClosed{}, s)
}
