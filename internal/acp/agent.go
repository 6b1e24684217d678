package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/jsonl"
	"github.com/scv-agent/scv/internal/proto"
)

// MaxLineBytes bounds one line from the client (a prompt with embedded
// files); a longer line is skipped and answered with an error.
const MaxLineBytes = 8 << 20

// eofGrace is how long the end of input waits for running turns to end
// (cancelled) before the connection to the server is closed under them;
// the server then stops what they still run.
const eofGrace = 1500 * time.Millisecond

// Options configure an agent.
type Options struct {
	Logger *slog.Logger
	// Version is scv's version, in agentInfo.
	Version string
	// Session holds what every session.start and session.resume sends
	// beside the workspace: the provider, model and key overrides of a
	// client of the daemon. Cwd, Origin and MCPServers are set per session.
	Session proto.SessionStart
	// Workspace reads the configuration of a session's workspace once:
	// the approval policy it sets ("" means ask-on-risk) and why sessions
	// there cannot reach their model (the provider's key is missing: the
	// error names the variable or the scv config step to set it), or nil.
	// nil: ask-on-risk, no key check here (the server reports it).
	Workspace func(cwd string) (policy string, keyErr error)
}

// Agent is one ACP connection onto one SCV protocol connection.
type Agent struct {
	opts Options
	log  *slog.Logger
	conn *client.Conn
	wire *wire

	mu          sync.Mutex
	initialized bool
	sessions    map[string]*session
	// turnReqs maps the request_id of a turn.start to its session, so an
	// error answering it reaches the waiting prompt.
	turnReqs map[string]*session
	reqSeq   int
	// useSeq orders the sessions' last use (session.used).
	useSeq uint64

	// closed is closed when the client's input ends; pumpDone when the
	// SCV connection's events end.
	closed   chan struct{}
	pumpDone chan struct{}
	// handlers are the requests' goroutines (started by the reader),
	// asks the permission requests' (started by the pump): each group is
	// waited for once its starter has ended.
	handlers sync.WaitGroup
	asks     sync.WaitGroup
}

// Serve speaks ACP on in and out over conn until in ends, then cancels
// what still runs, closes conn (which is Serve's from now on) and returns
// once every goroutine it started has ended. It returns nil at the end of
// input; an error only when the SCV handshake fails.
func Serve(ctx context.Context, conn *client.Conn, in io.Reader, out io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{opts: opts, log: opts.Logger, conn: conn, wire: newWire(out), sessions: map[string]*session{},
		turnReqs: map[string]*session{}, closed: make(chan struct{}), pumpDone: make(chan struct{})}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, "scv-acp", opts.Version); err != nil {
		return err
	}
	go a.pump()
	a.read(in)
	close(a.closed)
	a.wire.withdrawAll()
	a.cancelAll()
	waited := make(chan struct{})
	go func() { a.handlers.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(eofGrace):
	}
	conn.Close()
	<-waited
	<-a.pumpDone
	a.asks.Wait()
	return nil
}

// read handles the client's lines until the end of input.
func (a *Agent) read(in io.Reader) {
	r := jsonl.NewReader(in, MaxLineBytes)
	for n := 1; ; n++ {
		line, err := r.Next()
		if errors.Is(err, jsonl.ErrLineTooLong) {
			_ = a.wire.respond(nil, nil, &rpcError{Code: CodeInvalidRequest, Message: fmt.Sprintf("line %d is longer than %d bytes and was skipped", n, MaxLineBytes)})
			continue
		}
		if err != nil {
			if err != io.EOF {
				a.log.Warn("read from the client", "err", err)
			}
			return
		}
		a.line(n, line)
	}
}

// line handles one line: a request, a notification or a response.
func (a *Agent) line(n int, line []byte) {
	var in inbound
	if err := json.Unmarshal(line, &in); err != nil {
		var raw any
		if json.Unmarshal(line, &raw) == nil {
			_ = a.wire.respond(nil, nil, &rpcError{Code: CodeInvalidRequest, Message: fmt.Sprintf("line %d is not a JSON-RPC message: send an object with \"jsonrpc\":\"2.0\" and a method", n)})
			return
		}
		_ = a.wire.respond(nil, nil, &rpcError{Code: CodeParseError, Message: fmt.Sprintf("parse error: line %d is not JSON (%v)", n, err)})
		return
	}
	if in.JSONRPC != "2.0" {
		_ = a.wire.respond(in.ID, nil, &rpcError{Code: CodeInvalidRequest, Message: `invalid request: "jsonrpc" must be "2.0"`})
		return
	}
	switch {
	case in.Method != nil && len(in.ID) > 0:
		a.handlers.Go(func() {
			result, rerr := a.request(*in.Method, in.Params)
			then, isThen := result.(thenResult)
			if isThen {
				result = then.result
			}
			if err := a.wire.respond(in.ID, result, rerr); err != nil {
				a.log.Warn("answer the client", "method", *in.Method, "err", err)
			}
			if then.after != nil {
				then.after()
			}
		})
	case in.Method != nil:
		a.notification(*in.Method, in.Params)
	case len(in.ID) > 0 && (in.Result != nil || in.Error != nil):
		if !a.wire.answer(in) {
			a.log.Debug("response to no pending request", "id", string(in.ID))
		}
	default:
		_ = a.wire.respond(in.ID, nil, &rpcError{Code: CodeInvalidRequest, Message: "invalid request: a message needs a method (a request or notification) or a result or error (a response)"})
	}
}

// thenResult is a result with work to do once it was sent (updates that
// must follow the response).
type thenResult struct {
	result any
	after  func()
}

// request runs one request and returns its result or error.
func (a *Agent) request(method string, params json.RawMessage) (any, *rpcError) {
	if method == MethodInitialize {
		return a.initialize(params)
	}
	a.mu.Lock()
	ready := a.initialized
	a.mu.Unlock()
	if !ready {
		if _, known := methods()[method]; known {
			return nil, &rpcError{Code: CodeInvalidRequest, Message: "invalid request: send initialize first"}
		}
	}
	h, ok := methods()[method]
	if !ok {
		return nil, &rpcError{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q is not a method scv acp offers", method)}
	}
	return h(a, params)
}

// methods are the requests scv acp answers (initialize apart); built on
// first use, so a process that never speaks ACP does no work for it.
var methods = sync.OnceValue(func() map[string]func(*Agent, json.RawMessage) (any, *rpcError) {
	return map[string]func(*Agent, json.RawMessage) (any, *rpcError){
		MethodAuthenticate:    (*Agent).authenticate,
		MethodSessionNew:      (*Agent).newSession,
		MethodSessionLoad:     (*Agent).loadSession,
		MethodSessionResume:   (*Agent).resumeSession,
		MethodSessionList:     (*Agent).listSessions,
		MethodSessionClose:    (*Agent).closeSession,
		MethodSessionPrompt:   (*Agent).prompt,
		MethodSessionSetMode:  (*Agent).setMode,
		MethodSetConfigOption: (*Agent).setConfigOption,
	}
})

// notification handles a notification; an unknown one is ignored, as
// JSON-RPC has nobody to tell.
func (a *Agent) notification(method string, params json.RawMessage) {
	switch method {
	case MethodSessionCancel:
		var p sessionIDParams
		if err := decodeParams(params, &p); err != nil || p.SessionID == nil {
			a.log.Warn("session/cancel without a valid sessionId")
			return
		}
		if s := a.session(*p.SessionID); s != nil {
			s.cancel(a)
		}
	case MethodCancelRequest:
		// Nothing to stop: requests other than session/prompt answer
		// promptly, and a prompt is stopped by session/cancel.
	default:
		a.log.Debug("unknown notification", "method", method)
	}
}

func (a *Agent) initialize(params json.RawMessage) (any, *rpcError) {
	var p initializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, required("protocolVersion")
	}
	if *p.ProtocolVersion < ProtocolVersion {
		return nil, errInvalidParams("protocolVersion %d is not supported: scv acp speaks ACP version %d; update the editor's ACP client", *p.ProtocolVersion, ProtocolVersion)
	}
	a.mu.Lock()
	a.initialized = true
	a.mu.Unlock()
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession: true,
			// SCV's prompts are text: images and audio are refused.
			PromptCapabilities:  promptCapabilities{EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: true},
			SessionCapabilities: sessionCapabilities{List: &empty{}, Close: &empty{}, Resume: &empty{}},
		},
		AuthMethods: []any{},
		AgentInfo:   implementation{Name: "scv", Title: "SCV", Version: a.opts.Version},
	}, nil
}

func (a *Agent) authenticate(params json.RawMessage) (any, *rpcError) {
	return nil, errInvalidParams("methodId: scv acp offers no authentication methods; the provider key comes from SCV's configuration (scv config show names it)")
}

// session returns the open session id, or nil.
func (a *Agent) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// openSession returns the open session named by params' sessionId, or
// the error naming what is wrong.
func (a *Agent) openSession(id *string) (*session, *rpcError) {
	if id == nil {
		return nil, required("sessionId")
	}
	s := a.session(*id)
	if s == nil {
		return nil, &rpcError{Code: CodeNotFound, Message: fmt.Sprintf("session %q is not open on this connection: start one with session/new or reopen a stored one with session/load", *id)}
	}
	return s, nil
}

// nextRequestID is a fresh request_id for the SCV connection.
func (a *Agent) nextRequestID(prefix string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqSeq++
	return fmt.Sprintf("acp-%s-%d", prefix, a.reqSeq)
}

// cancelAll cancels every running turn (the end of input).
func (a *Agent) cancelAll() {
	for _, s := range a.sessionList() {
		s.cancel(a)
	}
}

// sessionList is a snapshot of the open sessions, to act on each without
// holding the lock.
func (a *Agent) sessionList() []*session {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		list = append(list, s)
	}
	return list
}

// pump translates the SCV connection's events until it ends.
func (a *Agent) pump() {
	defer close(a.pumpDone)
	for ev := range a.conn.Events() {
		a.event(ev)
	}
	for _, s := range a.sessionList() {
		s.lost()
	}
}

// event routes one SCV event to its session.
func (a *Agent) event(ev proto.Event) {
	if e, ok := ev.(*proto.Error); ok {
		a.mu.Lock()
		s := a.turnReqs[e.RequestID]
		a.mu.Unlock()
		if s != nil {
			s.refused(e)
			return
		}
		if e.Fatal || e.RequestID == "" {
			a.log.Warn("server error", "code", e.Code, "message", e.Message)
		} else {
			a.log.Debug("server refused a message", "request", e.RequestID, "code", e.Code, "message", e.Message)
		}
		return
	}
	se, ok := ev.(proto.SessionEvent)
	if !ok {
		return
	}
	if s := a.session(se.Session().SessionID); s != nil {
		s.event(a, ev)
	}
}

// serverError is the ACP error for a refused SCV request: the SCV code
// in data, the message as SCV wrote it (it names the field and what to do).
func serverError(what string, err error) *rpcError {
	var re *client.RequestError
	if errors.As(err, &re) {
		code := CodeInvalidParams
		switch re.Code {
		case proto.ErrSessionNotFound:
			code = CodeNotFound
		case proto.ErrInternal, proto.ErrStore:
			code = CodeInternalError
		case proto.ErrLimit, proto.ErrSessionBusy:
			code = CodeInvalidRequest
		}
		msg := what + ": " + re.Message
		if code == CodeInvalidParams {
			msg = "invalid params: " + msg
		}
		return &rpcError{Code: code, Message: msg, Data: map[string]string{"scvCode": re.Code}}
	}
	return errInternal("%s: %v", what, err)
}
