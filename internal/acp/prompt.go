package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// A prompt: the ACP prompt becomes one turn.start; the turn's events
// become session/update notifications, its approvals permission requests,
// its end the prompt's stopReason.

// session is one open ACP session: an open SCV session.
type session struct {
	id, cwd string
	ctxMax  int

	mu sync.Mutex
	// policy is the current approval policy, floor the configured one
	// (the weakest mode offered).
	policy, floor string
	// plan: the session is in SCV's plan mode (the "plan" mode).
	plan   bool
	model  string
	models []string
	// commands are the names of the session's custom commands.
	commands map[string]bool
	turn     *turn
	// last is the latest prompt's turn, kept after it returned: its
	// answer is written after that, and session/close answers after it.
	last *turn
	// used is when the session was last opened or prompted (Agent.useSeq),
	// guarded by the Agent's mu.
	used uint64
}

// turn is the running prompt of a session.
type turn struct {
	reqID  string
	turnID string
	// cancelled: session/cancel came (perhaps before turn.started).
	cancelled bool
	// end receives the turn's terminal event, or the error refusing it.
	end chan proto.Event
	// answered is closed once the prompt's response is written.
	answered chan struct{}
	// ctx ends the turn's pending permission requests.
	ctx  context.Context
	stop context.CancelFunc
	// asking counts the permission requests in flight (added under the
	// session's lock while not cancelled), so session/cancel withdraws
	// them ($/cancel_request) before the server is told and the failed
	// tool_call_update follows: the client sees one order.
	asking sync.WaitGroup
	calls  map[string]*call
}

// call is what is known of one tool call.
type call struct {
	name string
	args json.RawMessage
	risk string
	diff *proto.Diff
}

func (a *Agent) prompt(params json.RawMessage) (any, *rpcError) {
	var p promptParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s, rerr := a.openSession(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	if p.Prompt == nil {
		return nil, required("prompt")
	}
	text, rerr := promptText(*p.Prompt, s.cwd)
	if rerr != nil {
		return nil, rerr
	}
	t := &turn{reqID: a.nextRequestID("turn"), end: make(chan proto.Event, 1), calls: map[string]*call{}, answered: make(chan struct{})}
	t.ctx, t.stop = context.WithCancel(context.Background())
	defer t.stop()
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return nil, &rpcError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: session %s is already running a prompt; wait for its response or send session/cancel", s.id)}
	}
	s.turn, s.last = t, t
	s.mu.Unlock()
	// From here every answer closes t.answered once it is written.
	finish := func(res any, rerr *rpcError) (any, *rpcError) {
		return thenResult{result: res, after: func() { close(t.answered) }}, rerr
	}
	a.mu.Lock()
	a.turnReqs[t.reqID] = s
	a.useSeq++
	s.used = a.useSeq
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.turnReqs, t.reqID)
		a.mu.Unlock()
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
	}()
	start := &proto.TurnStart{Envelope: proto.Envelope{RequestID: t.reqID}, SessionID: s.id, Prompt: text}
	if name, args, ok := s.command(text); ok {
		start.Prompt, start.Command, start.Arguments = "", name, args
	}
	if err := a.conn.Send(start); err != nil {
		return finish(nil, errInvalidParams("prompt: %v", err))
	}
	var ev proto.Event
	select {
	case ev = <-t.end:
	case <-a.pumpDone:
		return finish(nil, errInternal("the SCV server ended before the turn did"))
	}
	if e, ok := ev.(*proto.Error); ok {
		return finish(nil, serverError("prompt", &client.RequestError{Code: e.Code, Message: e.Message}))
	}
	reason, rerr := stopReason(ev)
	if rerr != nil {
		return finish(nil, rerr)
	}
	return finish(promptResult{StopReason: reason}, nil)
}

// promptText is the user message of an ACP prompt: text blocks as they
// are, embedded resources attached with their URI, resource links named
// (the model reads them with its tools). Other block types are refused.
func promptText(blocks []json.RawMessage, cwd string) (string, *rpcError) {
	var b strings.Builder
	// A resource or a link is a paragraph of its own; text blocks are
	// joined as they are.
	block := false
	para := func() {
		if t := b.String(); t != "" && !strings.HasSuffix(t, "\n\n") {
			b.WriteString(strings.Repeat("\n", 2-min(2, len(t)-len(strings.TrimRight(t, "\n")))))
		}
	}
	for i, raw := range blocks {
		var c contentBlock
		if err := json.Unmarshal(raw, &c); err != nil {
			return "", errInvalidParams("prompt[%d] is not a content block: %v", i, err)
		}
		switch c.Type {
		case "text":
			if block {
				para()
				block = false
			}
			b.WriteString(c.Text)
		case "resource":
			if c.Resource == nil || c.Resource.URI == "" {
				return "", required(fmt.Sprintf("prompt[%d].resource.uri", i))
			}
			if c.Resource.Text == nil {
				return "", errInvalidParams("prompt[%d]: a resource without text (a blob) is not supported; embed text resources only", i)
			}
			para()
			fmt.Fprintf(&b, "<resource uri=%q>\n%s\n</resource>", c.Resource.URI, strings.TrimSuffix(*c.Resource.Text, "\n"))
			block = true
		case "resource_link":
			if c.URI == "" {
				return "", required(fmt.Sprintf("prompt[%d].uri", i))
			}
			para()
			fmt.Fprintf(&b, "[The user links %s: %s — read it with your tools if you need it.]", linkName(c), linkTarget(c.URI, cwd))
			block = true
		case "":
			return "", required(fmt.Sprintf("prompt[%d].type", i))
		default:
			return "", errInvalidParams("prompt[%d]: content type %q is not supported (promptCapabilities: embeddedContext only); send text, resource or resource_link", i, c.Type)
		}
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", errInvalidParams("prompt has no text")
	}
	return text, nil
}

func linkName(c contentBlock) string {
	if c.Title != "" {
		return c.Title
	}
	if c.Name != "" {
		return c.Name
	}
	return "a resource"
}

// linkTarget is a file URI as a workspace path (relative when inside
// cwd); any other URI as it is.
func linkTarget(uri, cwd string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	if rel, err := filepath.Rel(cwd, u.Path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return u.Path
}

// cancel stops the session's running prompt as Esc does in the TUI: the
// server cancels the turn (its process groups killed, pending approvals
// withdrawn) and the prompt answers cancelled. Pending permission
// requests are withdrawn with $/cancel_request.
func (s *session) cancel(a *Agent) {
	s.mu.Lock()
	t := s.turn
	var turnID string
	if t != nil {
		t.cancelled = true
		turnID = t.turnID
	}
	s.mu.Unlock()
	if t == nil {
		return
	}
	t.stop()
	t.asking.Wait()
	if turnID != "" {
		_ = a.conn.Send(&proto.TurnCancel{SessionID: s.id, TurnID: turnID})
	}
}

// refused ends the running prompt with the error refusing its turn.start.
func (s *session) refused(e *proto.Error) {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil && t.reqID == e.RequestID {
		select {
		case t.end <- e:
		default:
		}
	}
}

// lost ends a running prompt whose server connection ended.
func (s *session) lost() {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.stop()
	}
}

// update sends one session/update of s.
func (a *Agent) update(s *session, u any) {
	if err := a.wire.notify(MethodSessionUpdate, sessionNotification{SessionID: s.id, Update: u}); err != nil {
		a.log.Debug("session/update", "err", err)
	}
}

// event translates one event of the session's running turn.
func (s *session) event(a *Agent, ev proto.Event) {
	s.mu.Lock()
	t := s.turn
	if st, ok := ev.(*proto.TurnStarted); ok && t != nil && st.RequestID == t.reqID {
		t.turnID = st.TurnID
		if t.cancelled {
			defer func() { _ = a.conn.Send(&proto.TurnCancel{SessionID: s.id, TurnID: st.TurnID}) }()
		}
	}
	ctxMax := s.ctxMax
	s.mu.Unlock()
	if e, ok := ev.(*proto.TodoUpdated); ok && e.TurnID == "" {
		// Outside a turn: the list session.clear emptied.
		a.update(s, planOf(e.Items))
		return
	}
	te, ok := ev.(proto.TurnEvent)
	if !ok || t == nil || te.Turn().TurnID != t.turnID {
		return
	}
	for _, u := range translate(t, ev, s.cwd, ctxMax) {
		a.update(s, u)
	}
	switch e := ev.(type) {
	case *proto.ApprovalRequested:
		c := t.calls[e.CallID]
		a.asks.Go(func() { a.askPermission(s, t, e, c) })
	case *proto.TurnCompleted, *proto.TurnCancelled, *proto.TurnFailed:
		t.stop()
		select {
		case t.end <- ev:
		default:
		}
	}
}

// translate is the updates one live event of t gives.
func translate(t *turn, ev proto.Event, cwd string, ctxMax int) []any {
	switch e := ev.(type) {
	case *proto.AssistantDelta:
		return []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Content)}}
	case *proto.AssistantReasoning:
		return []any{chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Content)}}
	case *proto.ToolProposed:
		t.calls[e.CallID] = &call{name: e.Name, args: e.Arguments}
		return []any{toolCall{SessionUpdate: "tool_call", ToolCallID: e.CallID, Title: proposedTitle(e.Name, e.Arguments),
			Kind: kindOf(e.Name, ""), Status: StatusPending, Locations: locations(e.Name, e.Arguments, cwd), RawInput: e.Arguments}}
	case *proto.ApprovalRequested:
		c := t.call(e.CallID, e.Name)
		c.risk, c.diff = e.Risk, e.Diff
		return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: e.CallID, Title: clipLine(e.Summary), Kind: kindOf(e.Name, e.Risk)}}
	case *proto.ToolStarted:
		c := t.call(e.CallID, e.Name)
		if e.Diff != nil {
			c.diff = e.Diff
		}
		u := toolCall{SessionUpdate: "tool_call_update", ToolCallID: e.CallID, Status: StatusInProgress, Title: clipLine(e.Summary)}
		if d := c.diffContent(cwd); d != nil {
			u.Content = []toolCallContent{*d}
		}
		return []any{u}
	case *proto.ToolProgress:
		// The latest output line while the call runs (the server sends at
		// most two a second); the call's end replaces it with the output.
		tb := textBlock(e.Text)
		return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: e.CallID, Content: []toolCallContent{{Type: "content", Content: &tb}}}}
	case *proto.ToolCompleted:
		c := t.call(e.CallID, e.Name)
		return []any{c.completed(e, cwd, "tool_call_update")}
	case *proto.TodoUpdated:
		return []any{planOf(e.Items)}
	case *proto.TurnCompleted:
		if ctxMax > 0 {
			return []any{usageUpdate{SessionUpdate: "usage_update", Used: e.ContextTokens, Size: ctxMax}}
		}
	case *proto.TurnFailed:
		if reason, _ := stopReason(e); reason == StopRefusal || reason == StopMaxTurnRequests {
			return []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(fmt.Sprintf("\n\n[scv: the turn stopped (%s): %s]", e.Code, e.Message))}}
		}
	}
	return nil
}

// call is the record of call id, made when no proposal was seen.
func (t *turn) call(id, name string) *call {
	c := t.calls[id]
	if c == nil {
		c = &call{name: name}
		t.calls[id] = c
	}
	return c
}

// diffContent is the diff content of a write call, when it can be made.
func (c *call) diffContent(cwd string) *toolCallContent {
	if c.name != "write" {
		return nil
	}
	return writeDiff(cwd, c.args, c.diff)
}

// completed is the update that ends a call: its status, its bounded
// output and, for a write that succeeded, its diff.
func (c *call) completed(e *proto.ToolCompleted, cwd, kind string) toolCall {
	u := toolCall{SessionUpdate: kind, ToolCallID: e.CallID, Status: StatusCompleted}
	if !e.Success {
		u.Status = StatusFailed
	}
	if e.Success {
		if d := c.diffContent(cwd); d != nil {
			u.Content = append(u.Content, *d)
		}
	}
	if text := outputText(e.Name, e.Output); text != "" {
		tb := textBlock(text)
		u.Content = append(u.Content, toolCallContent{Type: "content", Content: &tb})
	}
	return u
}

// askPermission asks the editor about one approval and answers the server
// with what it chose: allow_once approves the call, allow_always approves
// it with the session grant SCV offered, anything else (reject_once, a
// cancelled request, an option SCV did not offer, an error, the turn's
// end) denies it.
func (a *Agent) askPermission(s *session, t *turn, e *proto.ApprovalRequested, c *call) {
	tc := toolCall{ToolCallID: e.CallID, Title: clipLine(e.Summary), Kind: kindOf(e.Name, e.Risk), Status: StatusPending}
	if c != nil {
		tc.RawInput = c.args
		tc.Locations = locations(c.name, c.args, s.cwd)
		if d := c.diffContent(s.cwd); d != nil {
			tc.Content = []toolCallContent{*d}
		}
	}
	if strings.Contains(e.Summary, "\n") || len(e.Summary) > maxTitleBytes {
		// The title is one line: the whole summary goes beside it.
		tb := textBlock(e.Summary)
		tc.Content = append(tc.Content, toolCallContent{Type: "content", Content: &tb})
	}
	opts := []permissionOption{{OptionID: AllowOnce, Name: "Allow once", Kind: AllowOnce}}
	if e.Grant != nil {
		opts = append(opts, permissionOption{OptionID: AllowAlways, Name: grantName(e.Grant), Kind: AllowAlways})
	}
	opts = append(opts, permissionOption{OptionID: RejectOnce, Name: "Reject", Kind: RejectOnce})
	res := &proto.ApprovalResolve{SessionID: s.id, ApprovalID: e.ApprovalID}
	s.mu.Lock()
	cancelled := t.cancelled
	if !cancelled {
		t.asking.Add(1)
	}
	s.mu.Unlock()
	if cancelled {
		return // the cancel withdraws the approval with the turn
	}
	raw, err := a.wire.call(t.ctx, a.closed, MethodRequestPermission, permissionParams{SessionID: s.id, ToolCall: tc, Options: opts})
	t.asking.Done()
	var pr permissionResult
	switch {
	case err != nil:
		a.log.Debug("permission request", "call", e.CallID, "err", err)
	case json.Unmarshal(raw, &pr) != nil:
		a.log.Warn("permission response is not a RequestPermissionResponse; denying", "call", e.CallID)
	case pr.Outcome.Outcome == "selected" && pr.Outcome.OptionID == AllowOnce:
		res.Approved = true
	case pr.Outcome.Outcome == "selected" && pr.Outcome.OptionID == AllowAlways && e.Grant != nil:
		res.Approved, res.Scope, res.Prefix = true, proto.ScopeSession, e.Grant.Prefix
	case pr.Outcome.Outcome == "selected" && pr.Outcome.OptionID == RejectOnce:
		res.Reason = "" // the model is told the user did not approve it
	case pr.Outcome.Outcome == "cancelled":
	default:
		a.log.Warn("permission response chose no offered option; denying", "call", e.CallID, "outcome", pr.Outcome.Outcome, "option", pr.Outcome.OptionID)
	}
	select {
	case <-a.closed:
		return // the end of input cancels the turn, which withdraws the approval
	default:
	}
	if t.ctx.Err() != nil && !res.Approved {
		return // the turn ended or was cancelled: the server withdrew the approval
	}
	res.RequestID = a.nextRequestID("approval")
	if err := a.conn.Send(res); err != nil {
		a.log.Debug("approval.resolve", "err", err)
	}
}

// grantName is the allow_always option's name: what the session grant
// covers.
func grantName(g *proto.Grant) string {
	if g.Prefix != "" {
		return fmt.Sprintf("Always allow commands starting with `%s` in this session", clip(g.Prefix, 200))
	}
	return fmt.Sprintf("Always allow %s calls in this session", g.Tool)
}
