package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/proto"
)

// handle processes one client line and reports whether the connection must
// end (a fatal error).
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
	switch env.Type {
	case proto.TypeInitialize:
		return c.initialize(line, env)
	case proto.TypeSessionStart:
		c.sessionStart(line, env)
	case proto.TypeTurnStart:
		c.turnStart(line, env)
	case proto.TypeTurnCancel:
		c.turnCancel(line, env)
	case proto.TypeApprovalSolve:
		c.approvalResolve(line, env)
	case proto.TypeSessionClear:
		c.sessionClear(line, env)
	case proto.TypeSessionClose:
		c.sessionClose(line, env)
	case proto.TypeDaemonStatus:
		if c.srv.opts.Status == nil {
			c.reqError(env.RequestID, proto.ErrUnsupported, "daemon.status is served only on the daemon socket", false)
			return false
		}
		st := c.srv.opts.Status()
		c.send(proto.Event{Type: proto.EventDaemonStatus, RequestID: env.RequestID, Status: &st}, nil)
	case proto.TypeDaemonReload, proto.TypeClawbotSettings, proto.TypeClawbotLogout:
		c.admin(line, env)
	case proto.TypeDaemonShutdown:
		if c.srv.opts.Shutdown == nil {
			c.reqError(env.RequestID, proto.ErrUnsupported, "daemon.shutdown is served only on the daemon socket", false)
			return false
		}
		c.send(proto.Event{Type: proto.EventDaemonStatus, RequestID: env.RequestID, Message: "shutting down"}, nil)
		c.srv.opts.Shutdown()
	default:
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("unknown message type %q", env.Type), false)
	}
	return false
}

// admin runs an administrative request in its own goroutine (a reload
// joins components, which may take seconds) and answers it.
func (c *conn) admin(line []byte, env proto.Envelope) {
	if c.srv.opts.Admin == nil {
		c.reqError(env.RequestID, proto.ErrUnsupported, env.Type+" is served only on the daemon socket", false)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		st, err := c.srv.opts.Admin(c.ctx, env.Type, func(v any) error {
			if err := json.Unmarshal(line, v); err != nil {
				return fmt.Errorf("invalid %s: %v", env.Type, err)
			}
			return nil
		})
		if err != nil {
			c.reqError(env.RequestID, proto.ErrInvalidRequest, err.Error(), false)
			return
		}
		c.send(proto.Event{Type: proto.EventDaemonStatus, RequestID: env.RequestID, Status: &st}, nil)
	}()
}

// decode parses a full message; a failure is answered with invalid_request.
func (c *conn) decode(line []byte, env proto.Envelope, v any) bool {
	if err := json.Unmarshal(line, v); err != nil {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("invalid %s: %v", env.Type, err), false)
		return false
	}
	return true
}

func (c *conn) initialize(line []byte, env proto.Envelope) bool {
	var m proto.Initialize
	if !c.decode(line, env, &m) {
		return false
	}
	if c.initialized {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, "already initialized", false)
		return false
	}
	if m.ProtocolVersion != proto.Version {
		c.reqError(env.RequestID, proto.ErrVersionMismatch, fmt.Sprintf("protocol version %d is not supported; this server speaks version %d", m.ProtocolVersion, proto.Version), true)
		return true
	}
	c.initialized = true
	c.send(proto.Event{Type: proto.EventInitialized, RequestID: env.RequestID, ProtocolVersion: proto.Version,
		Server: &proto.Peer{Name: "scv", Version: c.srv.opts.Version}}, nil)
	return false
}

func (c *conn) sessionStart(line []byte, env proto.Envelope) {
	var m proto.SessionStart
	if !c.decode(line, env, &m) {
		return
	}
	cwd, err := CanonicalDir(m.Cwd)
	if err != nil {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, "cwd "+err.Error(), false)
		return
	}
	m.Cwd = cwd
	if m.DelegationDepth < 0 {
		c.reqError(env.RequestID, proto.ErrInvalidRequest, "delegation_depth must not be negative", false)
		return
	}
	// Both bounds are checked, and a server-wide slot taken, before the
	// session is built: building one costs memory too.
	c.mu.Lock()
	open := len(c.sessions)
	c.mu.Unlock()
	if max := c.srv.opts.MaxSessionsPerConn; open >= max {
		c.reqError(env.RequestID, proto.ErrLimit, fmt.Sprintf("this connection already has %d open sessions (protocol.max_sessions_per_connection = %d); close one with session.close first", open, max), false)
		return
	}
	if max := c.srv.opts.MaxSessions; c.srv.sessions.Add(1) > int64(max) {
		c.srv.sessions.Add(-1)
		c.reqError(env.RequestID, proto.ErrLimit, fmt.Sprintf("the server already has %d open sessions (protocol.max_sessions); close one with session.close, or try again later", max), false)
		return
	}
	id := "s_" + uuid.NewString()[:12]
	ag, info, err := c.srv.opts.Factory.NewSession(c.ctx, id, m)
	if err != nil {
		c.srv.sessions.Add(-1)
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("cannot start a session: %v", err), false)
		return
	}
	if info.MaxQueuedTurns == 0 {
		info.MaxQueuedTurns = c.srv.opts.MaxQueuedTurns
	}
	s := newSession(id, ag, info)
	c.mu.Lock()
	c.sessions[id] = s
	c.mu.Unlock()
	if c.srv.opts.OnSessions != nil {
		c.srv.opts.OnSessions(1)
	}
	tools := info.Tools
	if tools == nil {
		tools = []string{}
	}
	c.send(proto.Event{Type: proto.EventSessionStarted, RequestID: env.RequestID, Cwd: info.Cwd, Model: info.Model,
		ContextMaxTokens: info.ContextMaxTokens, Tools: tools}, s)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		s.run(c)
	}()
}

// CanonicalDir requires an absolute existing directory and resolves
// symlinks: how session.start (and `scv tools call --workspace`) settle the
// workspace.
func CanonicalDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("an absolute directory is required")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q must be an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%q: %v", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%q: %v", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%q is not a directory", dir)
	}
	return filepath.Clean(real), nil
}

// target decodes a session-addressed message into v and finds its session;
// failures are answered (invalid_request, session_not_found) and give nil.
func (c *conn) target(line []byte, env proto.Envelope, v any) *session {
	if !c.decode(line, env, v) {
		return nil
	}
	// The session id comes from the decoded message: decoding the line a
	// third time would cost a scan of a 256 KiB prompt for nothing.
	var id string
	switch m := v.(type) {
	case *proto.TurnStart:
		id = m.SessionID
	case *proto.TurnCancel:
		id = m.SessionID
	case *proto.ApprovalResolve:
		id = m.SessionID
	case *proto.SessionRef:
		id = m.SessionID
	default:
		var ref struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal(line, &ref)
		id = ref.SessionID
	}
	return c.session(env, id)
}

func (c *conn) session(env proto.Envelope, id string) *session {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s == nil {
		c.reqError(env.RequestID, proto.ErrSessionNotFound, fmt.Sprintf("no session %q on this connection", id), false)
	}
	return s
}

func (c *conn) turnStart(line []byte, env proto.Envelope) {
	var m proto.TurnStart
	s := c.target(line, env, &m)
	if s == nil {
		return
	}
	switch {
	case m.Prompt == "":
		c.reqError(env.RequestID, proto.ErrInvalidRequest, "prompt must not be empty", false)
		return
	case len(m.Prompt) > proto.MaxPromptBytes:
		c.reqError(env.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("prompt is %d bytes, above the limit of %d", len(m.Prompt), proto.MaxPromptBytes), false)
		return
	}
	turnID := "t_" + uuid.NewString()[:12]
	queued, ok := s.enqueue(pending{turnID: turnID, requestID: env.RequestID, prompt: m.Prompt})
	switch {
	case !ok:
		max := max(s.info.MaxQueuedTurns, 0)
		c.reqError(env.RequestID, proto.ErrLimit, fmt.Sprintf("session %s already has %d queued turns (session.max_queued_turns = %d); wait for one to start, or cancel one with turn.cancel", s.id, max, max), false)
	case queued:
		c.send(proto.Event{Type: proto.EventQueueEnqueued, RequestID: env.RequestID, QueueID: turnID}, s)
	}
}

func (c *conn) turnCancel(line []byte, env proto.Envelope) {
	var m proto.TurnCancel
	s := c.target(line, env, &m)
	if s == nil {
		return
	}
	switch s.cancelTurn(m.TurnID) {
	case cancelActive:
		// turn.cancelled follows from the turn itself.
	case cancelQueued:
		c.send(proto.Event{Type: proto.EventTurnCancelled, RequestID: env.RequestID, TurnID: m.TurnID}, s)
	default:
		c.reqError(env.RequestID, proto.ErrTurnNotFound, fmt.Sprintf("no active or queued turn %q in session %s", m.TurnID, m.SessionID), false)
	}
}

func (c *conn) approvalResolve(line []byte, env proto.Envelope) {
	var m proto.ApprovalResolve
	s := c.target(line, env, &m)
	if s == nil {
		return
	}
	if !s.agent.Resolve(m.ApprovalID, m.Approved) {
		c.reqError(env.RequestID, proto.ErrApprovalNotFound, fmt.Sprintf("no pending approval %q in session %s", m.ApprovalID, m.SessionID), false)
	}
}

func (c *conn) sessionClear(line []byte, env proto.Envelope) {
	var m proto.SessionRef
	s := c.target(line, env, &m)
	if s == nil {
		return
	}
	if !s.clear() {
		c.reqError(env.RequestID, proto.ErrTurnActive, "a turn is active or queued; cancel it before session.clear", false)
		return
	}
	c.send(proto.Event{Type: proto.EventSessionCleared, RequestID: env.RequestID}, s)
}

func (c *conn) sessionClose(line []byte, env proto.Envelope) {
	var m proto.SessionRef
	s := c.target(line, env, &m)
	if s == nil {
		return
	}
	c.mu.Lock()
	delete(c.sessions, m.SessionID)
	c.mu.Unlock()
	s.shutdown()
	<-s.done
	s.release(c.srv)
	c.send(proto.Event{Type: proto.EventSessionClosed, RequestID: env.RequestID}, s)
}
