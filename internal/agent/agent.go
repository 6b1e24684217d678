// Package agent runs the model-driven tool loop of one session
// (docs/runtime.md): append the prompt, select the model-visible history,
// stream the model's answer, validate and approve each requested tool call,
// execute the calls serially in call order, append their bounded results,
// and loop until the model asks for no tool. It emits protocol events
// through a callback and never names a concrete tool.
package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// Options configure a Session.
type Options struct {
	Model           model.Client
	ModelName       string
	ReasoningEffort string
	Registry        *tool.Registry
	// Tools, when set, is asked for the registry before every model
	// request (an MCP server's tools may change during a session); the
	// tools offered and the calls answered are those of the registry it
	// returns. Registry is then the registry before the first request.
	Tools  func(ctx context.Context) *tool.Registry
	Policy approval.Policy
	// SystemPrompt is the complete system prompt (see Prompt).
	SystemPrompt    string
	HostedWebSearch bool
	MaxSteps        int
	Workspace       string
	SessionID       string
	OutputLimit     int
	Context         ContextOptions
	History         HistoryOptions
	// Secrets are the values of the keys SCV knows of; they never reach
	// a client in a progress line or a provider error message.
	Secrets []string
}

// Emit receives the session's events in order, each with its turn_id set.
// The server adds session_id and seq.
type Emit func(ev proto.TurnEvent)

// Session is one conversation. RunTurn must not be called concurrently.
type Session struct {
	opts    Options
	broker  *approval.Broker
	hist    history
	reg     *tool.Registry
	tools   []model.ToolSpec
	fixed   int // tokens of the system prompt and tool schemas
	lastCut int // removed_messages of the last context.compacted
	secrets secrets
}

// New returns an empty session.
func New(opts Options) *Session {
	s := &Session{opts: opts, broker: approval.NewBroker(), secrets: newSecrets(opts.Secrets)}
	s.setRegistry(opts.Registry)
	return s
}

// setRegistry makes r the session's tools: what the model is offered and
// what its calls are checked against.
func (s *Session) setRegistry(r *tool.Registry) {
	s.reg = r
	s.tools = nil
	for _, t := range r.Tools() {
		s.tools = append(s.tools, model.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	s.fixed = estimateText(s.opts.Context, s.opts.SystemPrompt)
	for _, t := range s.tools {
		s.fixed += estimateText(s.opts.Context, t.Name+t.Description+string(t.Parameters))
	}
}

// Resolve answers a pending approval of this session; see
// approval.Broker.Resolve for the errors.
func (s *Session) Resolve(approvalID string, a approval.Answer) error {
	return s.broker.Resolve(approvalID, a)
}

// CancelApproval calls cancel (which cancels the running turn) if the
// approval is still pending, as one step; false when it is not.
func (s *Session) CancelApproval(approvalID string, cancel func()) bool {
	return s.broker.CancelPending(approvalID, cancel)
}

// Grants lists the session's grants, oldest first.
func (s *Session) Grants() []proto.Grant {
	out := []proto.Grant{}
	for _, g := range s.broker.Grants() {
		out = append(out, proto.Grant{GrantID: g.ID, Tool: g.Tool, Risk: string(g.Risk), Prefix: g.Prefix})
	}
	return out
}

// Revoke removes a grant; false when the session has none with that id.
func (s *Session) Revoke(grantID string) bool { return s.broker.Revoke(grantID) }

// Clear empties the history (session.clear; the server checks idleness).
func (s *Session) Clear() {
	s.hist = history{}
	s.lastCut = 0
}

// HistoryLen is the number of canonical history messages.
func (s *Session) HistoryLen() int { return len(s.hist.msgs) }

// ContextTokens estimates the tokens a request would use now.
func (s *Session) ContextTokens() int {
	return s.fixed + estimateMessages(s.opts.Context, s.hist.msgs)
}

// turnFailure is a turn ending in turn.failed.
type turnFailure struct{ code, msg string }

func (f *turnFailure) Error() string { return f.code + ": " + f.msg }

func fail(code, format string, args ...any) error {
	return &turnFailure{code: code, msg: fmt.Sprintf(format, args...)}
}

// RunTurn runs one turn to its single terminal event. A failed or cancelled
// turn leaves the history as it was before the turn.
func (s *Session) RunTurn(ctx context.Context, turnID, prompt string, emit Emit) {
	ev := func(e proto.TurnEvent) {
		e.Turn().TurnID = turnID
		emit(e)
	}
	saved := s.hist.snapshot()
	ev(&proto.TurnStarted{})
	steps, usage, err := s.loop(ctx, prompt, ev)
	if err == nil {
		ev(&proto.TurnCompleted{Steps: steps, Usage: usage, ContextTokens: s.ContextTokens()})
		return
	}
	s.hist.restore(saved)
	var tf *turnFailure
	switch {
	case ctx.Err() != nil:
		ev(&proto.TurnCancelled{})
	case errors.As(err, &tf):
		ev(&proto.TurnFailed{Code: tf.code, Message: tf.msg})
	default:
		ev(&proto.TurnFailed{Code: proto.FailInternal, Message: oneLine(s.secrets.redact(err.Error()), 300)})
	}
}

func (s *Session) loop(ctx context.Context, prompt string, ev Emit) (int, *proto.Usage, error) {
	s.hist.append(model.Message{Role: model.User, Content: prompt}, true)
	if err := s.trim(ev); err != nil {
		return 0, nil, err
	}
	var usage *proto.Usage
	for step := 0; ; step++ {
		if step >= s.opts.MaxSteps {
			return step, usage, fail(proto.FailStep, "stopped after %d model requests without a final answer (agent.max_steps)", s.opts.MaxSteps)
		}
		if err := ctx.Err(); err != nil {
			return step, usage, err
		}
		if s.opts.Tools != nil {
			if r := s.opts.Tools(ctx); r != nil && r != s.reg {
				s.setRegistry(r)
			}
		}
		msgs, err := s.selectContext(ev)
		if err != nil {
			return step, usage, err
		}
		resp, err := s.opts.Model.Stream(ctx, model.Request{
			Model:           s.opts.ModelName,
			Instructions:    s.opts.SystemPrompt,
			Messages:        msgs,
			Tools:           s.tools,
			HostedWebSearch: s.opts.HostedWebSearch,
			ReasoningEffort: s.opts.ReasoningEffort,
			MaxOutputTokens: s.opts.Context.ReserveOutputTokens,
		}, func(d model.Delta) {
			if d.Kind == model.DeltaReasoning {
				ev(&proto.AssistantReasoning{Content: d.Text})
				return
			}
			ev(&proto.AssistantDelta{Content: d.Text})
		})
		if err != nil {
			if ctx.Err() != nil {
				return step, usage, ctx.Err()
			}
			return step, usage, modelFailure(err, s.secrets)
		}
		usage = addUsage(usage, resp.Usage)
		msg := model.Message{Role: model.Assistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
		if len(resp.ToolCalls) > 0 {
			// Signed thinking blocks go back to the provider while this
			// turn's tool loop runs (Anthropic requires them); reasoning
			// never enters the history otherwise.
			msg.Thinking = resp.Thinking
		}
		s.hist.append(msg, true)
		ev(&proto.AssistantCompleted{Content: resp.Content})
		if len(resp.ToolCalls) == 0 {
			// The turn is complete: its thinking blocks are no longer
			// needed, and its own messages may now be trimmed too.
			s.hist.dropThinking()
			s.hist.turnStart = len(s.hist.msgs)
			_ = s.trim(ev)
			return step + 1, usage, nil
		}
		for _, call := range resp.ToolCalls {
			res, err := s.call(ctx, call, ev)
			if err != nil {
				return step + 1, usage, err
			}
			s.hist.append(model.Message{Role: model.ToolRole, ToolCallID: call.ID, Name: call.Name, Content: res.Output}, true)
			if ctx.Err() != nil {
				return step + 1, usage, ctx.Err()
			}
		}
		if err := s.trim(ev); err != nil {
			return step + 1, usage, err
		}
	}
}

// modelFailure turns a provider error into the turn's failure; the message
// comes from the endpoint, so configured key values are redacted before it
// is cut to one line.
func modelFailure(err error, keys secrets) error {
	var me *model.Error
	if errors.As(err, &me) {
		code := proto.FailProvider
		switch me.Code {
		case model.CodeResponse:
			code = proto.FailResponse
		case model.CodeTool:
			code = proto.FailTool
		}
		msg := me.Message
		if msg == "" {
			msg = "the model provider failed without a message"
		}
		return fail(code, "%s", oneLine(keys.redact(msg), 300))
	}
	return fail(proto.FailProvider, "%s", oneLine(keys.redact(err.Error()), 300))
}

func addUsage(total *proto.Usage, u *model.Usage) *proto.Usage {
	if u == nil {
		return total
	}
	if total == nil {
		total = &proto.Usage{}
	}
	total.InputTokens += u.InputTokens
	total.OutputTokens += u.OutputTokens
	total.TotalTokens += u.TotalTokens
	total.CacheReadTokens += u.CacheReadTokens
	total.CacheWriteTokens += u.CacheWriteTokens
	return total
}

// call runs one tool call through validation, approval and execution and
// emits its lifecycle events. The returned result is what the model sees.
func (s *Session) call(ctx context.Context, call model.ToolCall, ev Emit) (tool.Result, error) {
	ev(&proto.ToolProposed{CallID: call.ID, Name: call.Name, Arguments: rawArgs(call.Arguments)})
	env := tool.Env{Workspace: s.opts.Workspace, SessionID: s.opts.SessionID, CallID: call.ID, OutputLimit: s.opts.OutputLimit}
	var stopProgress func()
	env.Progress, stopProgress = newProgress(call.ID, ev, s.secrets)
	plan, res, ok := s.reg.Prepare(env, call.Name, []byte(call.Arguments))
	var err error
	if ok {
		res, err = s.approveAndRun(ctx, call, plan, ev)
	}
	stopProgress()
	res = s.bound(res)
	ev(completed(call, res))
	return res, err
}

func (s *Session) approveAndRun(ctx context.Context, call model.ToolCall, plan tool.Plan, ev Emit) (tool.Result, error) {
	// The summary rides along, so a call that ran without an approval (a
	// read_only fetch of an allowlisted host) still shows what it did, such
	// as the full URL with its query; so does the diff of a call no one
	// was asked about.
	started := &proto.ToolStarted{CallID: call.ID, Name: call.Name, Summary: plan.Summary, Diff: protoDiff(plan.Diff)}
	switch approval.Decide(s.opts.Policy, plan.Risk) {
	case approval.Deny:
		return tool.Fail(tool.Denied, "denied: the approval policy %q does not allow %s calls (risk %s); do not retry this call", s.opts.Policy, call.Name, plan.Risk), nil
	case approval.Ask:
		if res, run := s.ask(ctx, call, plan, started, ev); !run {
			return res, nil
		}
	}
	if ctx.Err() != nil {
		return tool.Fail(tool.Cancelled, "cancelled before it started"), nil
	}
	ev(started)
	return runRecovered(ctx, call.Name, plan)
}

// ask gets a person's answer for a call, unless a session grant covers
// it; run false means the call does not run and res is its result.
func (s *Session) ask(ctx context.Context, call model.ToolCall, plan tool.Plan, started *proto.ToolStarted, ev Emit) (res tool.Result, run bool) {
	if g, ok := s.broker.Allowed(call.Name, plan.Risk, plan.Command, plan.NoGrant); ok {
		started.GrantID = g.ID
		return tool.Result{}, true
	}
	req := approval.Request{Offer: approval.Offer(call.Name, plan.Risk, plan.Command, plan.NoGrant), Command: plan.Command}
	id := "ap_" + uuid.NewString()[:8]
	announce := func() {
		ev(&proto.ApprovalRequested{ApprovalID: id, CallID: call.ID, Name: call.Name, Risk: string(plan.Risk), Cwd: s.opts.Workspace,
			Summary: plan.Summary, Diff: started.Diff, Grant: protoGrant(req.Offer)})
	}
	ans, answered := s.broker.Wait(ctx, id, req, announce)
	switch {
	case !answered:
		return tool.Fail(tool.Cancelled, "cancelled: the turn was cancelled while the call awaited approval"), false
	case !ans.Approved && ans.Reason != "":
		return tool.Fail(tool.Denied, "denied: the user did not approve this %s call. The user's reason: %s", call.Name, ans.Reason), false
	case !ans.Approved:
		return tool.Fail(tool.Denied, "denied: the user did not approve this %s call", call.Name), false
	}
	// The person has seen the diff; tool.started does not repeat it.
	started.Diff = nil
	return tool.Result{}, true
}

func protoDiff(d *tool.Diff) *proto.Diff {
	if d == nil {
		return nil
	}
	return &proto.Diff{Path: d.Path, Text: d.Text, Added: d.Added, Removed: d.Removed, Omitted: d.Omitted, Note: d.Note}
}

func protoGrant(g *approval.Grant) *proto.Grant {
	if g == nil {
		return nil
	}
	return &proto.Grant{Tool: g.Tool, Risk: string(g.Risk), Prefix: g.Prefix}
}

// runRecovered runs the plan; a panicking tool is a runtime failure, not a
// model-visible result, so it becomes an error that ends the turn with
// internal_error (the daemon and other sessions live on).
func runRecovered(ctx context.Context, name string, plan tool.Plan) (res tool.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res = tool.Fail(tool.Failed, "the %s tool crashed", name)
			err = fmt.Errorf("tool %s crashed: %v", name, v)
		}
	}()
	return plan.Run(ctx), nil
}

func completed(call model.ToolCall, res tool.Result) *proto.ToolCompleted {
	e := &proto.ToolCompleted{CallID: call.ID, Name: call.Name, Success: res.Success, Output: res.Output, Truncated: res.Truncated}
	if !res.Success {
		e.Error = string(res.Error)
		if e.Error == "" {
			e.Error = string(tool.Failed)
		}
	}
	return e
}

// bound caps a result at the output limit as a last line of defence; tools
// bound their own output first.
func (s *Session) bound(res tool.Result) tool.Result {
	limit := s.opts.OutputLimit
	if limit <= 0 || len(res.Output) <= limit {
		return res
	}
	cut := tool.TruncateUTF8(res.Output, limit-64)
	res.Output = cut + fmt.Sprintf("\n[output cut: %d of %d bytes shown]", len(cut), len(res.Output))
	res.Truncated = true
	res.JSON = false
	return res
}
