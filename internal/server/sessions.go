package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// The stored-session messages (docs/protocol.md): session.list,
// session.resume, session.fork, session.turns, session.rename and
// session.delete. They name sessions of the store, not sessions open on
// the connection; a stored session is open in one place at a time, which
// the store's leases decide between processes and Server.live within this
// one.

func validOrigin(o string) bool {
	switch o {
	case proto.OriginTUI, proto.OriginExec, proto.OriginStdio, proto.OriginClawbot, proto.OriginACP:
		return true
	}
	return false
}

// claim records that session id is being opened on a connection of this
// server, by a client of the given origin.
func (srv *Server) claim(id, origin string) bool {
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	if _, taken := srv.live[id]; taken {
		return false
	}
	srv.live[id] = origin
	return true
}

func (srv *Server) unclaim(id string) {
	srv.liveMu.Lock()
	delete(srv.live, id)
	srv.liveMu.Unlock()
}

func (srv *Server) claimedBy(id string) (string, bool) {
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	o, ok := srv.live[id]
	return o, ok
}

// closeStored records that an open session ended: closed in the store and
// its lease given back, so another process may resume it.
func (srv *Server) closeStored(id string) {
	defer srv.unclaim(id)
	st := srv.opts.Store
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := st.SetState(ctx, id, store.SessionClosed); err != nil && !errors.Is(err, store.ErrNotFound) {
		srv.opts.Logger.Warn("store: close session", "session", id, "err", err)
	}
	if err := st.Release(ctx, id); err != nil {
		srv.opts.Logger.Warn("store: release session", "session", id, "err", err)
	}
}

// busyHere is the session_busy message for a session open in this server.
func (srv *Server) busyHere(id, origin string, here bool) string {
	where := fmt.Sprintf("on another connection of this %s (pid %d)", srv.opts.Name, os.Getpid())
	if here {
		where = "on this connection already"
	}
	return fmt.Sprintf("session %s is open %s, by a %s client; close it there first", id, where, origin)
}

// storedMessage handles the stored-session messages; false for any other.
func (c *conn) storedMessage(msg proto.Message) bool {
	switch msg.(type) {
	case *proto.SessionList, *proto.SessionResume, *proto.SessionFork, *proto.SessionTurnsRequest,
		*proto.SessionRename, *proto.SessionDelete:
	default:
		return false
	}
	st := c.srv.opts.Store
	if st == nil {
		c.reqError(msg.Env().RequestID, proto.ErrUnsupported, fmt.Sprintf("%s: this server keeps no sessions (it runs without a session database)", msg.MessageType()), false)
		return true
	}
	ctx, cancel := context.WithTimeout(c.ctx, storeTimeout)
	defer cancel()
	switch m := msg.(type) {
	case *proto.SessionList:
		c.sessionList(ctx, st, m)
	case *proto.SessionResume:
		c.sessionResume(ctx, st, m)
	case *proto.SessionFork:
		c.sessionFork(ctx, st, m)
	case *proto.SessionTurnsRequest:
		c.sessionTurns(ctx, st, m)
	case *proto.SessionRename:
		c.sessionRename(ctx, st, m)
	case *proto.SessionDelete:
		c.sessionDelete(ctx, st, m)
	}
	return true
}

// storeError answers a failed store call about session id: session_busy,
// session_not_found or store_error.
func (c *conn) storeError(requestID, id string, err error) {
	code := storeErrorCode(err)
	msg := err.Error()
	if code == proto.ErrSessionNotFound {
		msg = fmt.Sprintf("no stored session %q (`scv sessions list --all` shows them)", id)
	}
	c.reqError(requestID, code, msg, false)
}

func (c *conn) sessionList(ctx context.Context, st *store.Store, m *proto.SessionList) {
	ws := m.Workspace
	if ws != "" {
		if !filepath.IsAbs(ws) {
			c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("workspace %q must be an absolute path", ws), false)
			return
		}
		if real, err := paths.CanonicalDir(ws); err == nil {
			ws = real // stored workspaces have their links resolved
		}
	}
	if m.Limit < 0 || m.Limit > proto.MaxListLimit {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("limit %d is outside 0..%d", m.Limit, proto.MaxListLimit), false)
		return
	}
	limit := m.Limit
	if limit == 0 {
		limit = proto.DefaultListLimit
	}
	page, err := st.ListSessions(ctx, store.ListOptions{Workspace: ws, Limit: limit, Before: m.Before, HideUnanswered: !m.All})
	if err != nil {
		code := proto.ErrStore
		if m.Before != "" {
			code = proto.ErrInvalidRequest
		}
		c.reqError(m.RequestID, code, fmt.Sprintf("list sessions: %v", err), false)
		return
	}
	out := &proto.SessionListed{Next: page.Next}
	for _, x := range page.Sessions {
		ss := Summary(st, x)
		if origin, here := c.srv.claimedBy(x.ID); here && ss.LiveIn != "" {
			ss.LiveIn += " (" + origin + " client)"
		}
		out.Sessions = append(out.Sessions, ss)
	}
	c.reply(m.RequestID, out, nil)
}

// Summary is the protocol form of stored session x (session.listed, scv
// sessions list --json); LiveIn names the process it is open in.
func Summary(st *store.Store, x store.Session) proto.StoredSession {
	out := proto.StoredSession{SessionID: x.ID, Title: x.Title, Cwd: x.Workspace, Provider: x.Provider, Model: x.Model,
		Origin: string(x.Origin), State: string(x.State), Created: timestamp(x.Created), Updated: timestamp(x.Updated),
		Turns: x.Turns, Bytes: x.Bytes, ForkedFrom: x.ForkedFrom, ForkedAt: x.ForkedAt, LastTurn: string(x.LastTurn)}
	if h, live := st.LiveHolder(x); live {
		out.LiveIn = h.String()
	}
	if x.FirstPrompt != "" && !strings.HasPrefix(x.FirstPrompt, x.Title) && !strings.HasPrefix(x.Title, x.FirstPrompt) {
		out.FirstPrompt = x.FirstPrompt
	}
	return out
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// sessionResume opens the stored session m names: by its id, or by a
// unique prefix of it as a person types it (`scv --resume s_1a2b`);
// session.resumed carries the whole id.
func (c *conn) sessionResume(ctx context.Context, st *store.Store, m *proto.SessionResume) {
	id, err := st.ResolveID(ctx, m.SessionID)
	var amb *store.AmbiguousError
	var short *store.ShortPrefixError
	switch {
	case errors.As(err, &amb), errors.As(err, &short):
		c.reqError(m.RequestID, proto.ErrInvalidRequest, err.Error(), false)
		return
	case err != nil:
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	c.openStored(ctx, st, m.RequestID, id, m.MaxTurns, proto.SessionStart{NoTools: m.NoTools, Provider: m.Provider, Model: m.Model,
		BaseURL: m.BaseURL, ProviderKeyEnv: m.ProviderKeyEnv, ProviderKey: m.ProviderKey, ProviderKeyBaseURL: m.ProviderKeyBaseURL,
		MCPServers: m.MCPServers})
}

func (c *conn) sessionFork(ctx context.Context, st *store.Store, m *proto.SessionFork) {
	origin := m.Origin
	if origin == "" {
		origin = proto.OriginStdio
	}
	if !validOrigin(origin) {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("origin %q is not one of tui, exec, stdio, clawbot, acp", origin), false)
		return
	}
	if m.TurnID == "" {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, "session.fork needs the turn_id of the turn to rewind to", false)
		return
	}
	if _, err := st.Session(ctx, m.SessionID); err != nil {
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	id := "s_" + uuid.NewString()[:12]
	if _, err := st.Fork(ctx, m.SessionID, m.TurnID, id, store.Origin(origin)); err != nil {
		code := proto.ErrStore
		if errors.Is(err, store.ErrNotFound) {
			code = proto.ErrTurnNotFound
		}
		msg := err.Error()
		if code == proto.ErrTurnNotFound {
			msg = fmt.Sprintf("session %s has no turn %q", m.SessionID, m.TurnID)
		}
		c.reqError(m.RequestID, code, msg, false)
		return
	}
	c.openStored(ctx, st, m.RequestID, id, m.MaxTurns, proto.SessionStart{NoTools: m.NoTools, Provider: m.Provider, Model: m.Model,
		BaseURL: m.BaseURL, ProviderKeyEnv: m.ProviderKeyEnv, ProviderKey: m.ProviderKey, ProviderKeyBaseURL: m.ProviderKeyBaseURL})
}

// openStored opens stored session id on this connection: its lease taken,
// an agent built for its workspace and stored endpoint (unless client, the
// client's no_tools, overrides and key, overrides it), its history
// loaded, and session.resumed sent with its last turns. An endpoint the
// overrides moved is stored for later resumes, and session.resumed names
// the one it moved from.
func (c *conn) openStored(ctx context.Context, st *store.Store, requestID, id string, maxTurns int, client proto.SessionStart) {
	if maxTurns < 0 || maxTurns > proto.MaxResumeTurns {
		c.reqError(requestID, proto.ErrInvalidRequest, fmt.Sprintf("max_turns %d is outside 0..%d", maxTurns, proto.MaxResumeTurns), false)
		return
	}
	if maxTurns == 0 {
		maxTurns = proto.DefaultResumeTurns
	}
	x, ok := c.leaseStored(ctx, st, requestID, id)
	if !ok {
		return
	}
	info := SessionInfo{}
	fail := func(code, msg string) {
		c.abandon(id, info)
		if rerr := st.Release(context.WithoutCancel(ctx), id); rerr != nil {
			c.srv.opts.Logger.Warn("store: release session", "session", id, "err", rerr)
		}
		c.reqError(requestID, code, msg, false)
	}
	cwd, err := paths.CanonicalDir(x.Workspace)
	if err != nil {
		fail(proto.ErrInvalidRequest, fmt.Sprintf("cannot resume session %s: its workspace %v", id, err))
		return
	}
	req := client
	req.Cwd, req.DelegationDepth, req.Origin = cwd, x.DelegationDepth, string(x.Origin)
	stored := Endpoint{Provider: x.Provider, WireAPI: x.WireAPI, BaseURL: x.BaseURL, Model: x.Model}
	keep := stored
	if x.Origin == store.OriginClawbot {
		// The chat bridge is the daemon's own client and cannot say
		// another endpoint: its sessions follow the daemon's
		// configuration (whose key is for it), a move still recorded.
		keep.WireAPI, keep.BaseURL = "", ""
	}
	ag, info, err := c.srv.opts.Factory.NewSession(c.ctx, id, SessionRequest{SessionStart: req, Stored: &keep, Store: st})
	if err != nil {
		fail(proto.ErrInvalidRequest, fmt.Sprintf("cannot resume session %s: %v", id, err))
		return
	}
	now := Endpoint{Provider: info.Provider, WireAPI: info.WireAPI, BaseURL: info.BaseURL, Model: info.Model}
	r, err := c.restore(ctx, st, ag, id, maxTurns, stored, now)
	if err != nil {
		fail(proto.ErrStore, fmt.Sprintf("cannot resume session %s: %v", id, err))
		return
	}
	s := newSession(id, ag, info)
	s.seq = r.l.Session.LastSeq
	ev := r.event(id, info, s.seq)
	if stored.BaseURL != "" && stored.BaseURL != info.BaseURL {
		ev.PreviousBaseURL = stored.BaseURL
		c.srv.opts.Logger.Info("session endpoint changed", "session", id, "from", stored.BaseURL, "to", info.BaseURL)
	}
	ev.Turns, ev.Before = c.fitTurns(ev, r.l.Turns, r.l.Before)
	c.attach(s, requestID, ev)
}

// leaseStored claims stored session id for this connection, reserves its
// place among the server's sessions and takes its lease in the store; it
// answers requestID with the error and reports false when any of them
// fails (undoing what it took).
func (c *conn) leaseStored(ctx context.Context, st *store.Store, requestID, id string) (store.Session, bool) {
	x, err := st.Session(ctx, id)
	if err != nil {
		c.storeError(requestID, id, err)
		return x, false
	}
	c.mu.Lock()
	_, here := c.sessions[id]
	c.mu.Unlock()
	if origin, open := c.srv.claimedBy(id); open {
		c.reqError(requestID, proto.ErrSessionBusy, c.srv.busyHere(id, origin, here), false)
		return x, false
	}
	if !c.reserve(requestID) {
		return x, false
	}
	if !c.srv.claim(id, string(x.Origin)) {
		c.srv.sessions.Add(-1)
		c.reqError(requestID, proto.ErrSessionBusy, c.srv.busyHere(id, string(x.Origin), false), false)
		return x, false
	}
	origin := x.Origin
	if x, err = st.Acquire(ctx, id); err != nil {
		c.abandon(id, SessionInfo{}) // the lease is someone else's: not released
		c.storeError(requestID, id, fmt.Errorf("%w (it was started from %s)", err, origin))
		return x, false
	}
	return x, true
}

// restored is what a resume read back from the store: the session's last
// turns, its usage so far, and the mode and todo list it was left in.
type restored struct {
	l     store.Loaded
	total store.Usage
	mode  string
	todos []proto.TodoItem
}

// restore loads session id's last maxTurns turns into ag, reads its usage,
// mode and todos, stores the endpoint it moved to (now, when it is not the
// stored one) and marks the session open.
func (c *conn) restore(ctx context.Context, st *store.Store, ag *agent.Session, id string, maxTurns int, stored, now Endpoint) (restored, error) {
	var r restored
	var err error
	if r.l, err = st.Load(ctx, id, store.LoadOptions{TailTurns: maxTurns, MaxEventBytes: c.srv.opts.MaxServerFrame}); err != nil {
		return r, err
	}
	if err = ag.LoadHistory(r.l.History); err != nil {
		return r, err
	}
	if r.total, err = st.SessionUsage(ctx, id); err != nil {
		return r, err
	}
	if now != stored && now.Provider != "" && now.Model != "" {
		if err = st.SetEndpoint(ctx, id, store.Endpoint(now)); err != nil {
			return r, err
		}
	}
	if r.mode, r.todos, err = resumeState(ctx, st, ag, r.l.Session); err != nil {
		return r, err
	}
	return r, st.SetState(ctx, id, store.SessionOpen)
}

// event is the session.resumed of session id opened with info at seq,
// without its turns.
func (r restored) event(id string, info SessionInfo, seq uint64) *proto.SessionResumed {
	l := r.l
	return &proto.SessionResumed{SessionID: id, Cwd: info.Cwd, Model: info.Model, ContextMaxTokens: info.ContextMaxTokens, Tools: info.Tools,
		Title: l.Session.Title, Origin: string(l.Session.Origin), ForkedFrom: l.Session.ForkedFrom, ForkedAt: l.Session.ForkedAt, Seq: seq,
		MaxPromptBytes: info.promptLimit(), BaseURL: info.BaseURL, Mode: r.mode, Todos: r.todos, Usage: protoUsage(r.total)}
}

// fitTurns converts stored turns and keeps the newest of them that fit one
// server frame beside the rest of ev; the newest turn, when too large
// alone, keeps its prompt and outcome without its events. It returns the
// turns and the cursor of the earlier ones (0 when none is left out).
func (c *conn) fitTurns(ev proto.Event, turns []store.Turn, before int) ([]proto.StoredTurn, int) {
	base, err := proto.EncodeEvent(ev)
	if err != nil {
		return nil, before
	}
	room := c.srv.opts.MaxServerFrame - len(base) - 2
	out := make([]proto.StoredTurn, len(turns))
	used, first := 0, len(turns)
	for i := len(turns) - 1; i >= 0; i-- {
		t := StoredTurn(turns[i])
		n := encodedLen(t) + 1
		if used+n > room && i == len(turns)-1 {
			t.Events, t.EventsOmitted = nil, true
			n = encodedLen(t) + 1
		}
		if used+n > room {
			break
		}
		out[i], used, first = t, used+n, i
	}
	switch {
	case first == 0:
		return out, before
	case first < len(turns):
		return out[first:], out[first].N
	case len(turns) > 0:
		return nil, turns[len(turns)-1].N + 1
	}
	return nil, before
}

// encodedLen is the length of t's JSON: its own fields encoded, plus the
// event lines, which are compact JSON the encoder copies as they are.
func encodedLen(t proto.StoredTurn) int {
	events := t.Events
	t.Events = nil
	b, err := json.Marshal(t)
	if err != nil {
		return 0
	}
	n := len(b)
	for _, e := range events {
		n += len(e) + 1
	}
	return n
}

// protoUsage is u in the protocol's form; nil for none.
func protoUsage(u store.Usage) *proto.Usage {
	if u == (store.Usage{}) {
		return nil
	}
	return &proto.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, CostUSD: u.CostUSD}
}

// StoredTurn is the protocol form of a stored turn (session.resumed,
// session.turns, scv sessions export).
func StoredTurn(t store.Turn) proto.StoredTurn {
	out := proto.StoredTurn{TurnID: t.ID, N: t.N, Prompt: t.Prompt, State: string(t.State), ErrorCode: t.ErrorCode,
		ErrorMessage: t.ErrorMessage, Started: timestamp(t.Started), Ended: timestamp(t.Ended), Images: protoImages(t.Images)}
	out.Usage = protoUsage(t.Usage)
	out.Events = make([]json.RawMessage, len(t.Events))
	for i, e := range t.Events {
		out.Events[i] = e.Data
	}
	if !t.Undone.IsZero() {
		u := &proto.StoredUndo{At: t.Undone.UTC().Format(time.RFC3339Nano), Files: []proto.UndoFile{}}
		for _, f := range t.Undid {
			action := proto.UndoRestore
			if f.Removed {
				action = proto.UndoRemove
			}
			u.Files = append(u.Files, proto.UndoFile{Path: f.Path, Action: action})
		}
		out.Undone = u
	}
	return out
}

func (c *conn) sessionTurns(ctx context.Context, st *store.Store, m *proto.SessionTurnsRequest) {
	if m.Limit < 0 || m.Limit > proto.MaxResumeTurns || m.Before < 0 {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("limit %d must be within 0..%d and before %d not negative", m.Limit, proto.MaxResumeTurns, m.Before), false)
		return
	}
	limit := m.Limit
	if limit == 0 {
		limit = proto.DefaultResumeTurns
	}
	turns, before, err := st.Turns(ctx, m.SessionID, m.Before, limit)
	if err != nil {
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	ev := &proto.SessionTurnsReply{SessionID: m.SessionID}
	ev.Turns, ev.Before = c.fitTurns(ev, turns, before)
	c.reply(m.RequestID, ev, nil)
}

func (c *conn) sessionRename(ctx context.Context, st *store.Store, m *proto.SessionRename) {
	if isEmptyTitle(m.Title) || len(m.Title) > proto.MaxPromptBytes {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("title must be a line of text (its first line, at most %d bytes, is kept)", proto.MaxTitleBytes), false)
		return
	}
	if err := st.Rename(ctx, m.SessionID, m.Title); err != nil {
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	x, err := st.Session(ctx, m.SessionID)
	if err != nil {
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	c.reply(m.RequestID, &proto.SessionRenamed{SessionID: x.ID, Title: x.Title}, nil)
}

func isEmptyTitle(t string) bool {
	for _, r := range t {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

func (c *conn) sessionDelete(ctx context.Context, st *store.Store, m *proto.SessionDelete) {
	if origin, open := c.srv.claimedBy(m.SessionID); open {
		c.mu.Lock()
		_, here := c.sessions[m.SessionID]
		c.mu.Unlock()
		c.reqError(m.RequestID, proto.ErrSessionBusy, c.srv.busyHere(m.SessionID, origin, here), false)
		return
	}
	if err := st.Delete(ctx, m.SessionID); err != nil {
		c.storeError(m.RequestID, m.SessionID, err)
		return
	}
	c.srv.forgetMissed(m.SessionID)
	if f := c.srv.opts.SessionDeleted; f != nil {
		f(m.SessionID)
	}
	c.reply(m.RequestID, &proto.SessionDeleted{SessionID: m.SessionID}, nil)
}
