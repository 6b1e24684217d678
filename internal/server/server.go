// Package server is SCV's transport-agnostic protocol handler
// (docs/protocol.md): one Serve call per connection — stdio or a daemon socket connection —
// with its own sessions, per-session prompt queues, approvals and ordered,
// sequenced events. Sessions are built by a Factory, so the server never
// sees configuration or concrete tools.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/jsonl"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/tool"
)

// SessionInfo describes a session the Factory built.
type SessionInfo struct {
	Cwd              string
	Model            string
	ContextMaxTokens int
	Tools            []string
	// Provider is the provider profile the session uses, and
	// DelegationDepth the depth it counts from (the larger of the
	// request's and the process's); both are stored with the session.
	Provider        string
	DelegationDepth int
	// WireAPI and BaseURL are the endpoint the session runs with; they are
	// stored with it (never the key), so a resume goes on there.
	WireAPI, BaseURL string
	// MaxQueuedTurns is session.max_queued_turns of the session's
	// configuration; 0 takes the server's Options.MaxQueuedTurns, and a
	// negative value allows no queue (a turn.start while a turn runs is
	// refused).
	MaxQueuedTurns int
	// MaxPromptBytes is session.max_prompt_bytes of the session's
	// configuration; 0 takes proto.MaxPromptBytes.
	MaxPromptBytes int
	// ReportTurns is agent.report_turns = "auto": a background job's
	// report starts a turn when the session has nothing else queued.
	ReportTurns bool
	// UserCommands is the user's custom commands directory ("" for
	// none); the workspace's are read from Cwd (commands.list).
	UserCommands string
	// Undo checks and reverts a stored turn's file changes in Cwd
	// (session.undo); nil: the session cannot undo.
	Undo tool.UndoFunc
	// Close, if set, releases what the session holds.
	Close func()
	// Switch moves the session to another provider profile of the
	// configuration, with model ("" for the profile's own), for
	// session.configure's provider; nil: the session cannot move.
	Switch func(ctx context.Context, provider, model string) (Switched, error)
	// Profiles lists the configured provider profiles, for
	// models.listed (no request is made); nil: none are offered.
	Profiles func() []proto.Profile
	// ListProfile asks a profile's endpoint for its models with the key
	// for that endpoint, for models.list with provider; nil: unsupported.
	ListProfile func(ctx context.Context, provider string) ([]string, error)
}

// Switched is a session's new endpoint after Switch: the model client of
// the profile (with the key for its endpoint), its reasoning effort and
// what is known of its models.
type Switched struct {
	Endpoint Endpoint
	Client   model.Client
	Effort   string
	Describe func(model string) agent.ModelInfo
}

// SessionRequest is what a Factory builds a session from: the client's
// session.start (for a resume or a fork: its explicit overrides and key,
// in the same fields) and, for a stored session, the endpoint it was
// stored with.
type SessionRequest struct {
	proto.SessionStart
	// Stored is the endpoint of a stored session being resumed or forked
	// (nil for session.start); its WireAPI and BaseURL are empty for a
	// session stored before they were recorded.
	Stored *Endpoint
	// Store is the database the server keeps sessions in (nil: none);
	// what a session keeps beside its history (its conversations with
	// delegated agents) goes there too.
	Store *store.Store
}

// Endpoint is what a session runs with: provider profile, wire API, base
// URL and model. It never holds a key.
type Endpoint struct {
	Provider, WireAPI, BaseURL, Model string
}

// Factory builds sessions. cwd has been canonicalised.
type Factory interface {
	NewSession(ctx context.Context, id string, req SessionRequest) (*agent.Session, SessionInfo, error)
}

// FactoryFunc adapts a function to Factory. The app is the one
// production Factory; FactoryFunc serves the tests of this package and of
// internal/daemon, which run a server without an app (a test of another
// package cannot reach an _test.go file here).
type FactoryFunc func(ctx context.Context, id string, req SessionRequest) (*agent.Session, SessionInfo, error)

// NewSession calls f.
func (f FactoryFunc) NewSession(ctx context.Context, id string, req SessionRequest) (*agent.Session, SessionInfo, error) {
	return f(ctx, id, req)
}

// Options configure a Server.
type Options struct {
	Factory Factory
	Logger  *slog.Logger
	Version string
	// MaxClientFrame and MaxServerFrame are [protocol] limits.
	MaxClientFrame int
	MaxServerFrame int
	// Status answers daemon.status; nil (stdio) makes it unsupported.
	Status func() proto.DaemonStatus
	// Shutdown handles daemon.shutdown (scv stop); nil makes it unsupported.
	Shutdown func()
	// Admin handles the daemon's requests about its components: m is a
	// *proto.DaemonReload, *proto.ClawbotSettings or *proto.ClawbotLogout.
	// It runs in its own goroutine, may take seconds, and is answered with
	// daemon.status; an error is answered with invalid_request and its
	// message. nil makes them unsupported.
	Admin func(ctx context.Context, m proto.Message) (proto.DaemonStatus, error)
	// OnSessions is told the change in open sessions (+1/-1), for status.
	OnSessions func(delta int)
	// MaxQueuedTurns bounds the turns waiting behind a session's active
	// one when the session's own configuration gives none
	// (DefaultMaxQueuedTurns when 0; negative: no queue).
	MaxQueuedTurns int
	// MaxSessionsPerConn and MaxSessions bound the open sessions of one
	// connection and of all connections of this Server
	// (DefaultMaxSessionsPerConn, DefaultMaxSessions when 0).
	MaxSessionsPerConn int
	MaxSessions        int
	// Store keeps every session, its history and each turn's events
	// (docs/store.md), and serves the stored-session messages; nil keeps
	// sessions in memory only (those messages are then unsupported). The
	// caller opens it, runs its Recover, and closes it after Serve.
	Store *store.Store
	// Name says what this server is ("daemon", "scv exec", ...) in the
	// messages that name where a session is open.
	Name string
	// SessionDeleted, when set, is told of every session.delete done, so
	// what the process keeps for the session (its background jobs) goes
	// too.
	SessionDeleted func(id string)
}

// Defaults of the bounds (session.max_queued_turns,
// protocol.max_sessions_per_connection, protocol.max_sessions).
const (
	DefaultMaxQueuedTurns     = 16
	DefaultMaxSessionsPerConn = 32
	DefaultMaxSessions        = 128
)

// Server serves connections.
type Server struct {
	opts Options
	// sessions counts the open sessions of every connection (and those
	// being built), for MaxSessions.
	sessions atomic.Int64
	// live holds the ids of the sessions open (or being opened) on any
	// connection, with their origin: a stored session is open in one
	// place at a time.
	liveMu sync.Mutex
	live   map[string]string
	// running counts the turns (and compactions) running now, on every
	// connection.
	running atomic.Int64
	// open holds the sessions open on any connection, by id, for Report
	// (guarded by liveMu).
	open map[string]*session
	// missed holds, per session, the job reports stored while no client
	// had the session open, for the next one (jobs.go; liveMu).
	missed map[string][]*JobReport
}

// Running is the number of turns running now on any connection (queued
// ones are not counted). The daemon gives memory back only while it is 0.
func (s *Server) Running() int64 { return s.running.Load() }

// New returns a Server.
func New(opts Options) *Server {
	if opts.MaxClientFrame <= 0 {
		opts.MaxClientFrame = proto.MaxClientFrameBytes
	}
	if opts.MaxServerFrame <= 0 {
		opts.MaxServerFrame = proto.MaxServerFrameBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxQueuedTurns == 0 {
		opts.MaxQueuedTurns = DefaultMaxQueuedTurns
	}
	if opts.MaxSessionsPerConn <= 0 {
		opts.MaxSessionsPerConn = DefaultMaxSessionsPerConn
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.Name == "" {
		opts.Name = "scv server"
	}
	return &Server{opts: opts, live: map[string]string{}}
}

// Serve runs one connection until the client's EOF, a fatal protocol error,
// a slow client, or ctx's end. Before returning it cancels every turn the
// connection started and waits for them.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &conn{srv: s, ctx: ctx, cancel: cancel, sessions: map[string]*session{}}
	c.out = jsonl.NewWriter(w, jsonl.WriterOptions{
		MaxFrames: proto.MaxQueuedFrames, MaxBytes: proto.MaxQueuedBytes,
		OnSlow: func() {
			s.opts.Logger.Warn("client stopped reading; disconnecting")
			cancel()
		},
	})
	lines := make(chan lineOrErr)
	go c.readLoop(r, lines)
	err := c.dispatchLoop(lines)
	cancel()
	c.closeAll()
	werr := c.out.Close()
	if err == nil && werr != nil {
		err = werr
	}
	// The reader goroutine ends when r reaches EOF or fails; stdio and
	// sockets are closed by their owners after Serve returns.
	return err
}

type lineOrErr struct {
	line []byte
	err  error
}

// readLoop feeds lines to the dispatcher until EOF; it stops early when the
// connection's context ends.
func (c *conn) readLoop(r io.Reader, out chan<- lineOrErr) {
	defer close(out)
	rd := jsonl.NewReader(r, c.srv.opts.MaxClientFrame)
	for {
		line, err := rd.Next()
		if err != nil && !errors.Is(err, jsonl.ErrLineTooLong) {
			if !errors.Is(err, io.EOF) {
				select {
				case out <- lineOrErr{err: err}:
				case <-c.ctx.Done():
				}
			}
			return
		}
		select {
		case out <- lineOrErr{line: append([]byte(nil), line...), err: err}:
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *conn) dispatchLoop(lines <-chan lineOrErr) error {
	for {
		select {
		case <-c.ctx.Done():
			return nil
		case l, ok := <-lines:
			if !ok {
				return nil // EOF
			}
			if l.err != nil {
				if errors.Is(l.err, jsonl.ErrLineTooLong) {
					c.reqError("", proto.ErrInvalidRequest, fmt.Sprintf("frame too large: %v (protocol.max_client_frame_bytes)", l.err), false)
					continue
				}
				return l.err
			}
			if fatal := c.handle(l.line); fatal {
				return nil
			}
		}
	}
}

// conn is one client connection.
type conn struct {
	srv    *Server
	ctx    context.Context
	cancel context.CancelFunc
	out    *jsonl.Writer

	sendMu      sync.Mutex // serialises hand-over to the write queue
	initialized bool

	mu       sync.Mutex
	sessions map[string]*session
	wg       sync.WaitGroup
}

// send encodes and queues one connection event (one that belongs to no
// session: initialized, error, daemon.status, the stored-session answers).
func (c *conn) send(ev proto.Event) {
	c.queue(c.encode(ev))
}

// sendSession stamps a session event with the session's id and next seq
// and queues it. Stamping happens under the session's send lock, held until
// the line is queued, so seq rises in the order clients read.
func (c *conn) sendSession(s *session, ev proto.SessionEvent) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	c.queue(c.stamp(s, ev))
}

// stamp sets ev's session_id and next seq and encodes it; s.sendMu is held.
func (c *conn) stamp(s *session, ev proto.SessionEvent) []byte {
	s.seq++
	h := ev.Session()
	h.SessionID, h.Seq = s.id, s.seq
	return c.encode(ev)
}

// reply sets the request_id ev answers and sends it: a session event
// through sendSession, anything else (s is nil then) through send.
func (c *conn) reply(requestID string, ev proto.Event, s *session) {
	ev.Head().RequestID = requestID
	se, isSession := ev.(proto.SessionEvent)
	switch {
	case isSession && s != nil:
		c.sendSession(s, se)
	case isSession:
		c.srv.opts.Logger.Error("session event sent without its session", "type", ev.EventType())
		c.send(ev)
	default:
		c.send(ev)
	}
}

// encode returns ev's line, bounded to the frame limit; nil when it
// cannot be encoded (logged).
func (c *conn) encode(ev proto.Event) []byte {
	b, err := proto.EncodeEvent(ev)
	if err != nil {
		c.srv.opts.Logger.Error("encode event", "type", ev.EventType(), "err", err)
		return nil
	}
	if len(b) > c.srv.opts.MaxServerFrame {
		b = c.oversized(ev)
	}
	return b
}

// queue hands one encoded line to the writer.
func (c *conn) queue(b []byte) {
	if b == nil {
		return
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.out.Send(b); err != nil {
		c.cancel()
	}
}

// oversized replaces an event too large for one frame by a bounded one that
// keeps its identity and says what happened: the event's large text is
// replaced by a note, or, for a type without such text, the whole event by
// a non-fatal error.
func (c *conn) oversized(ev proto.Event) []byte {
	msg := fmt.Sprintf("[%s event of more than %d bytes was cut to fit protocol.max_server_frame_bytes]", ev.EventType(), c.srv.opts.MaxServerFrame)
	switch e := ev.(type) {
	case *proto.AssistantDelta:
		e.Content = msg
	case *proto.AssistantReasoning:
		e.Content = msg
	case *proto.AssistantCompleted:
		e.Content = msg
	case *proto.ToolProposed:
		e.Arguments, _ = json.Marshal(msg)
	case *proto.ApprovalRequested:
		e.Summary = cut(e.Summary, 4096)
	case *proto.ToolStarted:
		e.Summary = cut(e.Summary, 4096)
	case *proto.ToolCompleted:
		e.Output, e.Truncated = msg, true
	case *proto.SessionUndone:
		for i := range e.Files {
			if d := e.Files[i].Diff; d != nil {
				d.Text, d.Omitted, d.Note = "", 0, "the diff was left out: the diffs of this undo are larger than protocol.max_server_frame_bytes"
			}
		}
	}
	b, err := proto.EncodeEvent(ev)
	if err != nil || len(b) > c.srv.opts.MaxServerFrame {
		b, _ = proto.EncodeEvent(&proto.Error{Code: proto.ErrInternal, Message: msg})
	}
	return b
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (c *conn) reqError(requestID, code, msg string, fatal bool) {
	c.reply(requestID, &proto.Error{Code: code, Message: msg, Fatal: fatal}, nil)
}

// closeAll cancels every session of the connection and waits for their
// goroutines.
func (c *conn) closeAll() {
	c.mu.Lock()
	sessions := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.sessions = map[string]*session{}
	c.mu.Unlock()
	for _, s := range sessions {
		s.shutdown()
	}
	c.wg.Wait()
	for _, s := range sessions {
		s.release(c.srv)
	}
}
