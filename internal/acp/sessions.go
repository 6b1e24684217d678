package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// The session methods: new, load, resume, list, close, set_mode and
// set_config_option.

// callTimeout bounds an SCV request made for an ACP method (a turn is not
// one: it runs until it ends).
const callTimeout = 30 * time.Second

// modelsTimeout bounds the models.list a new session asks for its model
// selector.
const modelsTimeout = 10 * time.Second

// maxModelChoices bounds the model selector's options.
const maxModelChoices = 200

// policies are SCV's approval policies, weakest first: the modes.
var policies = []sessionMode{
	{ID: "ask-on-risk", Name: "Ask on risk", Description: "read-only calls run; every other call asks first"},
	{ID: "ask-always", Name: "Ask always", Description: "every call asks first"},
	{ID: "deny-on-risk", Name: "Deny on risk", Description: "read-only calls run; every other call is refused without asking"},
}

func policyRank(p string) int {
	return slices.IndexFunc(policies, func(m sessionMode) bool { return m.ID == p })
}

// checkCwd is cwd if it is an absolute path of an existing directory.
func checkCwd(field string, cwd *string) (string, *rpcError) {
	if cwd == nil {
		return "", required(field)
	}
	if !filepath.IsAbs(*cwd) {
		return "", errInvalidParams("%s %q is not an absolute path; send the project's absolute directory", field, *cwd)
	}
	st, err := os.Stat(*cwd)
	if err != nil {
		return "", errInvalidParams("%s %q does not exist or cannot be read (%v)", field, *cwd, err)
	}
	if !st.IsDir() {
		return "", errInvalidParams("%s %q is not a directory", field, *cwd)
	}
	return filepath.Clean(*cwd), nil
}

// mcpServers converts the editor's MCP servers; an SSE server is refused
// (mcpCapabilities.sse is false), like a malformed entry, naming it.
func mcpServers(list *[]mcpServer) ([]proto.MCPServer, *rpcError) {
	if list == nil {
		return nil, required("mcpServers (send [] for none)")
	}
	var out []proto.MCPServer
	for i, m := range *list {
		field := fmt.Sprintf("mcpServers[%d]", i)
		if m.Name == "" {
			return nil, required(field + ".name")
		}
		s := proto.MCPServer{Name: m.Name}
		switch m.Type {
		case "", "stdio":
			if m.Command == "" {
				return nil, required(field + ".command")
			}
			s.Command, s.Args = m.Command, m.Args
			if len(m.Env) > 0 {
				s.Env = map[string]string{}
				for _, e := range m.Env {
					s.Env[e.Name] = e.Value
				}
			}
		case "http":
			if m.URL == "" {
				return nil, required(field + ".url")
			}
			s.URL = m.URL
			if len(m.Headers) > 0 {
				s.Headers = map[string]string{}
				for _, h := range m.Headers {
					s.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, errInvalidParams("%s.type %q is not supported: scv acp takes stdio and http MCP servers (mcpCapabilities)", field, m.Type)
		}
		out = append(out, s)
	}
	return out, nil
}

// workspace is the configured policy of cwd, or the error of a missing
// key.
func (a *Agent) workspace(cwd string) (string, *rpcError) {
	if a.opts.Workspace == nil {
		return "", nil
	}
	policy, err := a.opts.Workspace(cwd)
	if err != nil {
		return "", &rpcError{Code: CodeAuthRequired, Message: "authentication required: " + err.Error()}
	}
	return policy, nil
}

func (a *Agent) newSession(params json.RawMessage) (any, *rpcError) {
	var p newSessionParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	cwd, rerr := checkCwd("cwd", p.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	servers, rerr := mcpServers(p.MCPServers)
	if rerr != nil {
		return nil, rerr
	}
	policy, rerr := a.workspace(cwd)
	if rerr != nil {
		return nil, rerr
	}
	req := a.opts.Session
	req.Cwd, req.Origin, req.MCPServers = cwd, proto.OriginACP, servers
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var started *proto.SessionStarted
	err := a.withRoom(ctx, func() (err error) {
		started, err = a.conn.StartSession(ctx, req)
		return err
	})
	if err != nil {
		return nil, serverError("session/new", err)
	}
	s := a.addSession(started.SessionID, started.Cwd, started.Model, started.ContextMaxTokens, policy)
	// The commands are the server's to read (fast); the models the
	// provider's to list (up to its timeout): commands first.
	return thenResult{result: s.describe(), after: func() { a.listCommands(s); a.listModels(s) }}, nil
}

// addSession records an open session whose configured policy is floor.
func (a *Agent) addSession(id, cwd, model string, ctxMax int, floor string) *session {
	if policyRank(floor) < 0 {
		floor = policies[0].ID
	}
	s := &session{id: id, cwd: cwd, model: model, ctxMax: ctxMax, policy: floor, floor: floor}
	a.mu.Lock()
	a.useSeq++
	s.used = a.useSeq
	a.sessions[id] = s
	a.mu.Unlock()
	return s
}

// describe is the session's id, modes and config options.
func (s *session) describe() sessionResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionResult{SessionID: s.id, Modes: s.modes(), ConfigOptions: s.configOptions()}
}

// listModels asks the provider for its models once the session is
// answered (a provider may take seconds) and sends the model selector's
// choices as a config_option_update when it has any.
func (a *Agent) listModels(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), modelsTimeout)
	listed, err := client.CallFor[*proto.ModelsListed](ctx, a.conn, &proto.ModelsList{SessionID: s.id})
	cancel()
	if err != nil {
		a.log.Debug("models.list", "err", err)
		return
	}
	s.mu.Lock()
	s.models = listed.Models
	opts := s.configOptions()
	s.mu.Unlock()
	a.update(s, configUpdate{SessionUpdate: "config_option_update", ConfigOptions: opts})
}

func (a *Agent) loadSession(params json.RawMessage) (any, *rpcError) {
	return a.reopen(params, true)
}

func (a *Agent) resumeSession(params json.RawMessage) (any, *rpcError) {
	return a.reopen(params, false)
}

// reopen is session/load (replay: the stored turns are sent as updates
// first) and session/resume.
func (a *Agent) reopen(params json.RawMessage, replay bool) (any, *rpcError) {
	var p loadSessionParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == nil {
		return nil, required("sessionId")
	}
	cwd, rerr := checkCwd("cwd", p.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	var servers []proto.MCPServer
	if replay || p.MCPServers != nil {
		if servers, rerr = mcpServers(p.MCPServers); rerr != nil {
			return nil, rerr
		}
	}
	if a.session(*p.SessionID) != nil {
		return nil, &rpcError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: session %q is already open on this connection", *p.SessionID)}
	}
	policy, rerr := a.workspace(cwd)
	if rerr != nil {
		return nil, rerr
	}
	turns := 1
	if replay {
		turns = proto.MaxResumeTurns
	}
	def := a.opts.Session
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var resumed *proto.SessionResumed
	err := a.withRoom(ctx, func() (err error) {
		resumed, err = client.CallFor[*proto.SessionResumed](ctx, a.conn, &proto.SessionResume{SessionID: *p.SessionID, MaxTurns: turns,
			ProviderKey: def.ProviderKey, ProviderKeyEnv: def.ProviderKeyEnv, MCPServers: servers})
		return err
	})
	if err != nil {
		return nil, serverError("session/load", err)
	}
	if !sameDir(resumed.Cwd, cwd) {
		_, _ = a.conn.Call(ctx, &proto.SessionClose{SessionID: resumed.SessionID})
		return nil, errInvalidParams("cwd %q is not the workspace of session %s (%s); open it with that cwd", cwd, resumed.SessionID, resumed.Cwd)
	}
	s := a.addSession(resumed.SessionID, resumed.Cwd, resumed.Model, resumed.ContextMaxTokens, policy)
	s.mu.Lock()
	s.plan = resumed.Mode == proto.ModePlan
	s.mu.Unlock()
	if replay {
		turns, earlier := a.olderTurns(ctx, resumed)
		if earlier > 0 {
			a.update(s, chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(fmt.Sprintf("[scv: %d earlier turns are not replayed]", earlier))})
		}
		if err := a.replay(s, turns); err != nil {
			return nil, errInternal("session/load: replay: %v", err)
		}
	}
	if len(resumed.Todos) > 0 {
		a.update(s, planOf(resumed.Todos))
	}
	res := s.describe()
	res.SessionID = "" // not part of a load's or resume's result
	return thenResult{result: res, after: func() { a.listCommands(s); a.listModels(s) }}, nil
}

// withRoom runs open (a session.start or session.resume); when the server
// refuses it for a bound on open sessions, the least recently used idle
// session of this connection is closed (it stays stored: session/load
// reopens it) and open runs once more. Editors open a session per thread
// and seldom close one, so without this a long-running editor would hit
// protocol.max_sessions_per_connection.
func (a *Agent) withRoom(ctx context.Context, open func() error) error {
	err := open()
	var re *client.RequestError
	if !errors.As(err, &re) || re.Code != proto.ErrLimit {
		return err
	}
	a.mu.Lock()
	var lru *session
	for _, s := range a.sessions {
		s.mu.Lock()
		idle := s.turn == nil
		s.mu.Unlock()
		if idle && (lru == nil || s.used < lru.used) {
			lru = s
		}
	}
	if lru != nil {
		delete(a.sessions, lru.id)
	}
	a.mu.Unlock()
	if lru == nil {
		return err
	}
	if _, cerr := a.conn.Call(ctx, &proto.SessionClose{SessionID: lru.id}); cerr != nil {
		return err
	}
	a.log.Info("closed the least recently used session to open another", "closed", lru.id)
	return open()
}

// maxReplayPages bounds the session.turns pages a load fetches beyond
// session.resumed's (each at most one server frame).
const maxReplayPages = 8

// olderTurns is the resumed session's turns, oldest first, with the
// earlier pages fetched when session.resumed could not carry them all, and
// how many earlier turns are still left out.
func (a *Agent) olderTurns(ctx context.Context, r *proto.SessionResumed) ([]proto.StoredTurn, int) {
	turns, before := r.Turns, r.Before
	for page := 0; before > 1 && page < maxReplayPages; page++ {
		reply, err := client.CallFor[*proto.SessionTurnsReply](ctx, a.conn, &proto.SessionTurnsRequest{SessionID: r.SessionID, Before: before, Limit: proto.MaxResumeTurns})
		if err != nil || len(reply.Turns) == 0 {
			a.log.Warn("page back through a loaded session", "session", r.SessionID, "err", err)
			break
		}
		turns = append(reply.Turns, turns...)
		before = reply.Before
	}
	if before > 1 {
		return turns, before - 1
	}
	return turns, 0
}

// sameDir says a and b name one directory (symbolic links resolved).
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func (a *Agent) listSessions(params json.RawMessage) (any, *rpcError) {
	var p listSessionsParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	req := &proto.SessionList{}
	if p.Cwd != nil {
		cwd, rerr := checkCwd("cwd", p.Cwd)
		if rerr != nil {
			return nil, rerr
		}
		if r, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = r
		}
		req.Workspace = cwd
	}
	if p.Cursor != nil {
		req.Before = *p.Cursor
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	listed, err := client.CallFor[*proto.SessionListed](ctx, a.conn, req)
	if err != nil {
		return nil, serverError("session/list", err)
	}
	out := listSessionsResult{Sessions: []sessionInfo{}, NextCursor: listed.Next}
	for _, x := range listed.Sessions {
		out.Sessions = append(out.Sessions, sessionInfo{SessionID: x.SessionID, Cwd: x.Cwd, Title: x.Title, UpdatedAt: x.Updated})
	}
	return out, nil
}

func (a *Agent) closeSession(params json.RawMessage) (any, *rpcError) {
	var p sessionIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s, rerr := a.openSession(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	s.cancel(a)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if _, err := a.conn.Call(ctx, &proto.SessionClose{SessionID: s.id}); err != nil {
		return nil, serverError("session/close", err)
	}
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
	// A prompt still waiting ends cancelled, also when the turn's own
	// turn.cancelled is behind the answer in the event stream.
	s.mu.Lock()
	t, last := s.turn, s.last
	s.mu.Unlock()
	if t != nil {
		select {
		case t.end <- &proto.TurnCancelled{}:
		default:
		}
	}
	// The prompt's answer comes before the close's, also when the
	// prompt had already returned (s.turn cleared) but its answer was
	// not written yet.
	if last != nil {
		select {
		case <-last.answered:
		case <-time.After(callTimeout):
		}
	}
	return empty{}, nil
}

func (a *Agent) setMode(params json.RawMessage) (any, *rpcError) {
	var p setModeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s, rerr := a.openSession(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	if p.ModeID == nil {
		return nil, required("modeId")
	}
	if rerr := a.selectMode(s, *p.ModeID, "modeId"); rerr != nil {
		return nil, rerr
	}
	return empty{}, nil
}

func (a *Agent) setConfigOption(params json.RawMessage) (any, *rpcError) {
	var p setConfigParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s, rerr := a.openSession(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	if p.ConfigID == nil {
		return nil, required("configId")
	}
	if p.Value == nil {
		return nil, required("value")
	}
	var value string
	if json.Unmarshal(*p.Value, &value) != nil {
		return nil, errInvalidParams("value must be a string (a value id of the option)")
	}
	switch *p.ConfigID {
	case "mode":
		if rerr := a.selectMode(s, value, "value"); rerr != nil {
			return nil, rerr
		}
		// A client following the session's modes sees the change too.
		s.mu.Lock()
		current := s.currentMode()
		s.mu.Unlock()
		a.update(s, modeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: current})
	case "model":
		if rerr := a.configure(s, &proto.SessionConfigure{SessionID: s.id, Model: value}, "value"); rerr != nil {
			return nil, rerr
		}
	default:
		return nil, errInvalidParams("configId %q is not an option of this session (mode, model)", *p.ConfigID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return setConfigResult{ConfigOptions: s.configOptions()}, nil
}

// configure sends session.configure and records what changed; field names
// the ACP field a refusal is about.
func (a *Agent) configure(s *session, m *proto.SessionConfigure, field string) *rpcError {
	if m.ApprovalPolicy != "" && policyRank(m.ApprovalPolicy) < 0 {
		return errInvalidParams("%s %q is not a mode of this session (ask-on-risk, ask-always, deny-on-risk, plan)", field, m.ApprovalPolicy)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	done, err := client.CallFor[*proto.SessionConfigured](ctx, a.conn, m)
	if err != nil {
		return serverError(field, err)
	}
	s.mu.Lock()
	s.model = done.Model
	if done.ApprovalPolicy != "" {
		s.policy = done.ApprovalPolicy
	}
	s.mu.Unlock()
	return nil
}

// modes are the session's modes: the policies at least as strict as its
// configured one, the current one marked. Called with s.mu held.
func (s *session) modes() *modeState {
	st := &modeState{CurrentModeID: s.currentMode()}
	for _, m := range policies {
		if policyRank(m.ID) >= policyRank(s.floor) {
			st.AvailableModes = append(st.AvailableModes, m)
		}
	}
	st.AvailableModes = append(st.AvailableModes, planMode)
	return st
}

// configOptions are the mode selector and, where the provider lists its
// models, the model selector. Called with s.mu held.
func (s *session) configOptions() []configOption {
	mode := configOption{ID: "mode", Name: "Mode", Category: "mode", Type: "select", CurrentValue: s.currentMode()}
	for _, m := range s.modes().AvailableModes {
		mode.Options = append(mode.Options, selectOption{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	out := []configOption{mode}
	if len(s.models) == 0 {
		return out
	}
	model := configOption{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: s.model}
	ids := s.models
	if len(ids) > maxModelChoices {
		ids = ids[:maxModelChoices]
	}
	if !slices.Contains(ids, s.model) {
		ids = append([]string{s.model}, ids...)
	}
	for _, id := range ids {
		model.Options = append(model.Options, selectOption{Value: id, Name: id})
	}
	return append(out, model)
}
