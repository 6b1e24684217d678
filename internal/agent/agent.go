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
	"slices"
	"strings"
	"sync"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/redact"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/toolcall"
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
	// MaxStepsSetting names where MaxSteps came from, for the failure
	// message ("" is agent.max_steps).
	MaxStepsSetting string
	Workspace       string
	SessionID       string
	OutputLimit     int
	Context         ContextOptions
	History         HistoryOptions
	// Secrets are the values of the keys SCV knows of; they never reach
	// a client in a progress line or a provider error message.
	Secrets []string
	// Rules are the grants the session starts with (scv exec --allow).
	Rules []approval.Grant
	// SavedRules are the [[approvals.rules]] of the session's
	// configuration; RuleBook holds the rules saved while the server runs
	// (shared by its sessions, and where "always (save rule)" saves).
	SavedRules []approval.Grant
	RuleBook   *approval.RuleBook
	// Hooks runs the user's hooks; nil: none.
	Hooks *hooks.Runner
	// Mentions expands a prompt's `@path` mentions when its turn starts:
	// the text appended to the prompt the model gets, the mentions
	// turn.started reports, and the mentioned image files, which join the
	// prompt's input images (carried are the sizes of the images it
	// already has). nil: a prompt is sent as written.
	Mentions func(ctx context.Context, prompt string, carried []int64) mention.Expansion
	// Describe says what is known of a model: its context window (0:
	// Context.MaxTokens) and prices (a completed turn's usage carries
	// its cost when they are known). nil: nothing is known.
	Describe func(modelName string) ModelInfo
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
	// wire keeps the encoded history between this session's requests.
	wire    *model.HistoryCache
	secrets redact.Values
	// changes are the files the current (or last) turn wrote.
	changes []filechange.Change
	// turnID is the running turn's id (for hook events).
	turnID string
	// cfgMu guards opts.Model, opts.ModelName, opts.ReasoningEffort,
	// opts.Describe and opts.Policy, which session.configure changes
	// while a turn may run.
	cfgMu sync.Mutex
	// floor is the policy the session was built with (its configuration's):
	// SetPolicy never goes below it.
	floor approval.Policy
	// mode is the session's mode ("" is proto.ModeDefault) and todos its
	// latest todo list; both guarded by cfgMu.
	mode  string
	todos []proto.TodoItem
}

// New returns an empty session.
func New(opts Options) *Session {
	s := &Session{opts: opts, broker: approval.NewBroker(), secrets: redact.NewValues(opts.Secrets), floor: opts.Policy, wire: model.NewHistoryCache()}
	s.broker.AddRules(opts.Rules)
	s.broker.UseRules(opts.Workspace, approval.NewRuleBook("u", opts.SavedRules), opts.RuleBook)
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
func (s *Session) Grants() []proto.Grant { return protoGrants(s.broker.Grants()) }

// SavedRules lists the saved rules that apply to the session (its
// configuration's and those saved while the server runs), deny and allow.
func (s *Session) SavedRules() []proto.Grant { return protoGrants(s.broker.Rules()) }

// protoGrants are gs as the protocol lists them, each with its id.
func protoGrants(gs []approval.Grant) []proto.Grant {
	out := []proto.Grant{}
	for _, g := range gs {
		pg := protoGrant(&g)
		pg.GrantID = g.ID
		out = append(out, *pg)
	}
	return out
}

// isSavedRule says g is a saved rule rather than a grant or an --allow rule.
func isSavedRule(g approval.Grant) bool {
	return strings.HasPrefix(g.ID, "u") || strings.HasPrefix(g.ID, "s")
}

// ruleCheck checks a call against the deny rules before its pre_tool hooks
// (check) and the policy: a call a deny rule matches is denied without
// asking; one a deny rule cannot judge is asked, whatever the policy and
// grants say.
func (s *Session) ruleCheck(name string, check func(context.Context, tool.Plan) toolcall.Verdict) func(context.Context, tool.Plan) toolcall.Verdict {
	return func(ctx context.Context, plan tool.Plan) toolcall.Verdict {
		deny, ask := s.broker.Judge(name, plan)
		if deny != "" {
			return toolcall.Verdict{Deny: true, Reason: deny}
		}
		var v toolcall.Verdict
		if check != nil {
			v = check(ctx, plan)
		}
		if ask != "" && !v.Deny && !v.Ask {
			v = toolcall.Verdict{Ask: true, AskReason: ask}
		}
		return v
	}
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
	return s.fixedTokens() + s.hist.tokens(s.opts.Context)
}

// turnFailure is a turn ending in turn.failed.
type turnFailure struct{ code, msg string }

func (f *turnFailure) Error() string { return f.code + ": " + f.msg }

func fail(code, format string, args ...any) error {
	return &turnFailure{code: code, msg: fmt.Sprintf(format, args...)}
}

// RunTurn runs one turn to its single terminal event. A failed turn leaves
// the history as it was before the turn; a cancelled one keeps what
// happened, closed by the interrupted note (keepInterrupted).
func (s *Session) RunTurn(ctx context.Context, turnID, prompt string, emit Emit) {
	s.RunTurnImages(ctx, turnID, prompt, nil, emit)
}

// RunTurnImages is RunTurn with input images attached to the prompt (read
// and checked by the caller, with their bytes).
func (s *Session) RunTurnImages(ctx context.Context, turnID, prompt string, images []model.Image, emit Emit) {
	s.RunTurnAttached(ctx, turnID, prompt, s.Attach(ctx, prompt, images), emit, nil)
}

// Attached is a prompt's input images and what its `@` mentions attach,
// as the turn will send them.
type Attached struct {
	// Images are the prompt's input images: turn.start's, then the
	// mentioned image files.
	Images   []model.Image
	text     string
	mentions []proto.Mention
}

// Attach expands prompt's `@` mentions (Options.Mentions) now, so the
// caller can record the turn's images before it runs; images are the
// prompt's own (turn.start's).
func (s *Session) Attach(ctx context.Context, prompt string, images []model.Image) Attached {
	a := Attached{Images: images}
	if s.opts.Mentions == nil {
		return a
	}
	carried := make([]int64, len(images))
	for i, im := range images {
		carried[i] = im.Size
	}
	x := s.opts.Mentions(ctx, prompt, carried)
	a.text, a.mentions = x.Text, x.Mentions
	if len(x.Images) > 0 {
		a.Images = slices.Clip(slices.Clone(images))
		for _, f := range x.Images {
			a.Images = append(a.Images, model.Image{Path: f.Path, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, Data: f.Data})
		}
	}
	return a
}

// RunTurnAttached is RunTurn for a prompt whose attachments Attach made.
// When ended is set, the terminal event goes to it instead of emit,
// with what the turn left for its record (TurnEnd).
func (s *Session) RunTurnAttached(ctx context.Context, turnID, prompt string, att Attached, emit Emit, ended Ended) {
	ev := func(e proto.TurnEvent) {
		e.Turn().TurnID = turnID
		emit(e)
	}
	before := s.Mark()
	saved := before.snap
	s.changes = nil
	s.turnID = turnID
	attached, images := att.text, att.Images
	started := &proto.TurnStarted{Mentions: att.mentions}
	ev(started)
	end := func(e proto.TurnEvent) {
		s.turnEndHooks(ctx, e, ev)
		if ended == nil {
			ev(e)
			return
		}
		e.Turn().TurnID = turnID
		ended(e, s.turnEnd(before, e))
	}
	// The hooks see the prompt as typed; the attachments follow it and
	// any context the hooks add.
	prompt, blocked := s.promptHooks(ctx, prompt, ev)
	if blocked != nil {
		end(blocked)
		return
	}
	prompt += attached
	steps, usage, err := s.loop(ctx, model.Message{Role: model.User, Content: prompt, Images: images}, ev)
	if err == nil {
		end(&proto.TurnCompleted{Steps: steps, Usage: usage, ContextTokens: s.ContextTokens()})
		return
	}
	if ctx.Err() != nil {
		s.keepInterrupted(saved, ev)
		end(&proto.TurnCancelled{})
		return
	}
	s.hist.restore(saved)
	var tf *turnFailure
	switch {
	case errors.As(err, &tf):
		end(&proto.TurnFailed{Code: tf.code, Message: tf.msg})
	default:
		end(&proto.TurnFailed{Code: proto.FailInternal, Message: oneLine(s.secrets.Redact(err.Error()), 300)})
	}
}

// InterruptedNote closes a cancelled turn in the history, so the model
// knows the user stopped it.
const InterruptedNote = "[interrupted by the user]"

// interruptedCall is the result given to a call the cancellation cut off.
const interruptedCall = "[interrupted by the user before this call finished; it may have had part of its effect]"

// keepInterrupted keeps a cancelled turn in the history (the prompt, the
// answers and the calls that ran with their results), so the model knows
// what its tools did: a call left without a result gets interruptedCall,
// and InterruptedNote ends the turn. The history before the turn comes
// back when nothing of the turn is there or the result cannot be trimmed
// within the limits.
func (s *Session) keepInterrupted(saved snapshot, ev Emit) {
	if len(s.hist.msgs) <= len(saved.msgs) {
		s.hist.restore(saved)
		return
	}
	last := len(s.hist.msgs) - 1
	for last >= 0 && s.hist.msgs[last].Role == model.ToolRole {
		last--
	}
	if last >= 0 && s.hist.msgs[last].Role == model.Assistant {
		answered := map[string]bool{}
		for _, m := range s.hist.msgs[last+1:] {
			answered[m.ToolCallID] = true
		}
		for _, c := range s.hist.msgs[last].ToolCalls {
			if !answered[c.ID] {
				s.hist.append(model.Message{Role: model.ToolRole, ToolCallID: c.ID, Name: c.Name, Content: interruptedCall}, false)
			}
		}
	}
	s.hist.dropThinking()
	s.hist.append(model.Message{Role: model.User, Content: InterruptedNote}, true)
	s.hist.turnStart = len(s.hist.msgs)
	if err := s.trim(ev); err != nil {
		s.hist.restore(saved)
	}
}

func (s *Session) loop(ctx context.Context, prompt model.Message, ev Emit) (int, *proto.Usage, error) {
	s.hist.append(prompt, true)
	if err := s.trim(ev); err != nil {
		return 0, nil, err
	}
	setup := s.turnModel()
	cx := s.opts.Context
	cx.MaxTokens = setup.info.ContextWindow
	var usage *proto.Usage
	for step := 0; ; step++ {
		if step >= s.opts.MaxSteps {
			return step, usage, s.stepsExhausted()
		}
		if err := ctx.Err(); err != nil {
			return step, usage, err
		}
		if s.opts.Tools != nil {
			if r := s.opts.Tools(ctx); r != nil && r != s.reg {
				s.setRegistry(r)
			}
		}
		msgs, err := s.selectContext(cx, ev)
		if err != nil {
			return step, usage, err
		}
		resp, err := s.request(ctx, setup, s.requestImages(msgs), ev)
		if err != nil {
			return step, usage, err
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
			// Every message may go now, so trimming cannot fall short
			// today; if it ever does, the turn fails like any other
			// history overflow instead of leaving the history unbounded.
			if err := s.trim(ev); err != nil {
				return step + 1, usage, err
			}
			setup.cost(usage)
			return step + 1, usage, nil
		}
		if err := s.runCalls(ctx, resp.ToolCalls, ev); err != nil {
			return step + 1, usage, err
		}
		if err := s.trim(ev); err != nil {
			return step + 1, usage, err
		}
	}
}

// stepsExhausted is the failure of a turn that used its model requests
// without a final answer, naming the setting that capped them.
func (s *Session) stepsExhausted() error {
	setting := s.opts.MaxStepsSetting
	if setting == "" {
		setting = "agent.max_steps"
	}
	return fail(proto.FailStep, "stopped after %d model requests without a final answer (%s)", s.opts.MaxSteps, setting)
}

// request streams one model request of msgs, emitting its text and
// reasoning as they come; a failed request is the context's error when it
// was cancelled, or the model's failure with its secrets redacted.
func (s *Session) request(ctx context.Context, setup turnSetup, msgs []model.Message, ev Emit) (model.Response, error) {
	resp, err := setup.client.Stream(ctx, model.Request{
		Model:           setup.model,
		Instructions:    s.instructions(),
		Messages:        msgs,
		Tools:           s.tools,
		HostedWebSearch: s.opts.HostedWebSearch,
		ReasoningEffort: setup.effort,
		MaxOutputTokens: s.opts.Context.ReserveOutputTokens,
		Cache:           s.wire,
	}, func(d model.Delta) {
		if d.Kind == model.DeltaReasoning {
			ev(&proto.AssistantReasoning{Content: d.Text})
			return
		}
		ev(&proto.AssistantDelta{Content: d.Text})
	})
	if err != nil {
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		return resp, modelFailure(err, s.secrets)
	}
	return resp, nil
}

// runCalls runs a response's tool calls one after another, each result
// appended to the history, and stops at the first error or cancellation.
func (s *Session) runCalls(ctx context.Context, calls []model.ToolCall, ev Emit) error {
	for _, call := range calls {
		res, err := s.call(ctx, call, ev)
		if err != nil {
			if ctx.Err() != nil && res.Output != "" {
				// What the cancelled call reported stays with it
				// (keepInterrupted keeps the turn).
				s.hist.append(model.Message{Role: model.ToolRole, ToolCallID: call.ID, Name: call.Name, Content: res.Output}, false)
			}
			return err
		}
		s.hist.append(model.Message{Role: model.ToolRole, ToolCallID: call.ID, Name: call.Name, Content: res.Output}, true)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// modelFailure turns a provider error into the turn's failure; the message
// comes from the endpoint, so configured key values are redacted before it
// is cut to one line.
func modelFailure(err error, keys redact.Values) error {
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
		return fail(code, "%s", oneLine(keys.Redact(msg), 300))
	}
	return fail(proto.FailProvider, "%s", oneLine(keys.Redact(err.Error()), 300))
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

// call runs one tool call through validation, approval and execution (the
// one path every tool call takes, toolcall.Run) and emits its lifecycle
// events. The returned result is what the model sees.
func (s *Session) call(ctx context.Context, call model.ToolCall, ev Emit) (tool.Result, error) {
	ev(&proto.ToolProposed{CallID: call.ID, Name: call.Name, Arguments: rawArgs(call.Arguments)})
	env := tool.Env{Workspace: s.opts.Workspace, SessionID: s.opts.SessionID, CallID: call.ID, OutputLimit: s.opts.OutputLimit, Changed: s.noteChange,
		Todos: s.todoSink(ev)}
	var stopProgress func()
	env.Progress, stopProgress = newProgress(call.ID, ev, s.secrets)
	var ran *tool.Plan
	res, err := toolcall.Run(ctx, toolcall.Call{
		Registry: s.reg, Policy: s.Policy(), Approve: s.broker.Approver(s.announce(ev)), Env: env,
		Name: call.Name, Args: []byte(call.Arguments), Check: s.ruleCheck(call.Name, s.preToolCheck(call, ev)), ReadOnly: s.planning(),
		// The summary rides along, so a call that ran without an approval
		// (a read_only fetch of an allowlisted host) still shows what it
		// did, such as the full URL with its query; so does the diff of a
		// call no person was asked about (a person who was asked has seen
		// it).
		Started: func(plan tool.Plan, ans approval.Answer, asked bool) {
			ran = &plan
			started := &proto.ToolStarted{CallID: call.ID, Name: call.Name, Summary: plan.Summary, GrantID: ans.GrantID}
			if g := ans.Granted; g != nil {
				started.Granted = protoGrant(g)
				started.Granted.GrantID = g.ID
			}
			if r := ans.Rule; r != nil {
				started.Rule = protoGrant(r)
				started.Rule.GrantID = r.ID
			}
			if !asked || ans.GrantID != "" {
				started.Diff = protoDiff(plan.Diff)
			}
			ev(started)
		},
	})
	stopProgress()
	if ran != nil && err == nil {
		res = s.postToolHooks(ctx, call, *ran, res, ev)
	}
	ev(completed(call, res))
	return res, err
}

// announce tells the session's client about an approval the broker's
// approver registered (with the diff of a write and the grant a person may
// give instead) and runs the approval_requested hooks.
func (s *Session) announce(ev Emit) approval.Announce {
	return func(ctx context.Context, id string, r approval.Request) {
		ev(&proto.ApprovalRequested{ApprovalID: id, CallID: r.CallID, Name: r.Name, Risk: string(r.Risk), Cwd: s.opts.Workspace,
			Summary: r.Summary, Diff: protoDiff(r.Plan.Diff), Grant: protoGrant(r.Offer), Reason: r.Why})
		s.approvalHooks(ctx, r, id, ev)
	}
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
	risk := string(g.Risk)
	if risk == "" {
		risk = proto.AnyRisk
	}
	pg := &proto.Grant{Tool: g.Tool, Risk: risk, Prefix: g.Prefix, Command: g.Command, Path: g.Path, Domain: g.Domain, Source: g.Source, Workspace: g.Workspace}
	if isSavedRule(*g) {
		pg.Decision = proto.DecisionAllow
		if g.Deny {
			pg.Decision = proto.DecisionDeny
		}
	}
	return pg
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
