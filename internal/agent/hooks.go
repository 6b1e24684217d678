package agent

import (
	"context"
	"fmt"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/toolcall"
)

// The session's hooks (docs/hooks.md): each run is a hook.ran event of
// the turn; what the hooks decide is applied here. Without hooks
// (Options.Hooks nil) every step below is a nil check.

// reportHook turns a hook run into its hook.ran event.
func reportHook(ev Emit, callID string) func(hooks.Ran) {
	return func(r hooks.Ran) {
		ev(&proto.HookRan{Hook: r.Hook, Event: r.Event, Tool: r.Tool, CallID: callID, DurationMS: r.Duration.Milliseconds(),
			Outcome: r.Outcome, Reason: r.Reason, Stderr: r.Stderr, ExitCode: r.ExitCode})
	}
}

// promptHooks runs the user_prompt hooks: the prompt the model gets (with
// the context hooks added), or a turn failure when one blocked it.
func (s *Session) promptHooks(ctx context.Context, prompt string, ev Emit) (string, *proto.TurnFailed) {
	h := s.opts.Hooks
	if !h.Has(hooks.UserPrompt, "") {
		return prompt, nil
	}
	d := h.Run(ctx, hooks.Input{Event: hooks.UserPrompt, TurnID: s.turnID, Prompt: prompt}, reportHook(ev, ""))
	if d.Deny {
		return "", &proto.TurnFailed{Code: proto.FailPromptBlocked, Message: fmt.Sprintf("hook %s blocked the prompt: %s", d.Hook, d.Reason)}
	}
	if d.Context != "" {
		prompt += "\n\n" + d.Context
	}
	return prompt, nil
}

// turnEndHooks runs the turn_end hooks just before the turn's terminal
// event, also when the turn was cancelled.
func (s *Session) turnEndHooks(ctx context.Context, end proto.TurnEvent, ev Emit) {
	h := s.opts.Hooks
	if !h.Has(hooks.TurnEnd, "") {
		return
	}
	in := hooks.Input{Event: hooks.TurnEnd, TurnID: s.turnID}
	switch e := end.(type) {
	case *proto.TurnCompleted:
		in.Outcome = "completed"
	case *proto.TurnFailed:
		in.Outcome, in.Code = "failed", e.Code
	default:
		in.Outcome = "cancelled"
	}
	h.Run(context.WithoutCancel(ctx), in, reportHook(ev, ""))
}

func hookTool(call model.ToolCall, plan tool.Plan) *hooks.Tool {
	return &hooks.Tool{Name: call.Name, CallID: call.ID, Risk: string(plan.Risk), Summary: plan.Summary, Arguments: rawArgs(call.Arguments)}
}

// preToolCheck is the check of a call that pre_tool hooks match (nil when
// none does): they see the validated plan before the policy.
func (s *Session) preToolCheck(call model.ToolCall, ev Emit) func(context.Context, tool.Plan) toolcall.Verdict {
	h := s.opts.Hooks
	if !h.Has(hooks.PreTool, call.Name) {
		return nil
	}
	return func(ctx context.Context, plan tool.Plan) toolcall.Verdict {
		d := h.Run(ctx, hooks.Input{Event: hooks.PreTool, TurnID: s.turnID, Tool: hookTool(call, plan)}, reportHook(ev, call.ID))
		switch {
		case d.Deny:
			return toolcall.Verdict{Deny: true, Reason: fmt.Sprintf("hook %s denied the call: %s", d.Hook, d.Reason)}
		case d.Ask:
			return toolcall.Verdict{Ask: true, AskReason: fmt.Sprintf("a hook asks for your approval: hook %s asks for an approval: %s", d.Hook, d.Reason)}
		}
		return toolcall.Verdict{}
	}
}

// postToolHooks runs the post_tool hooks of a call that ran and adds
// their notes to the result the model sees.
func (s *Session) postToolHooks(ctx context.Context, call model.ToolCall, plan tool.Plan, res tool.Result, ev Emit) tool.Result {
	h := s.opts.Hooks
	if !h.Has(hooks.PostTool, call.Name) || ctx.Err() != nil {
		return res
	}
	in := hooks.Input{Event: hooks.PostTool, TurnID: s.turnID, Tool: hookTool(call, plan),
		Result: &hooks.Result{Success: res.Success, Error: string(res.Error), Output: res.Output, Truncated: res.Truncated}}
	if d := h.Run(ctx, in, reportHook(ev, call.ID)); d.Note != "" {
		res.Output += "\n\n" + d.Note
		res.JSON = false
	}
	return res
}

// approvalHooks runs the approval_requested hooks (notifications) once
// the approval was announced; an answer given meanwhile is kept.
func (s *Session) approvalHooks(ctx context.Context, r approval.Request, approvalID string, ev Emit) {
	h := s.opts.Hooks
	if !h.Has(hooks.ApprovalRequested, r.Name) {
		return
	}
	in := hooks.Input{Event: hooks.ApprovalRequested, TurnID: s.turnID, ApprovalID: approvalID,
		Tool: &hooks.Tool{Name: r.Name, CallID: r.CallID, Risk: string(r.Risk), Summary: r.Summary, Arguments: rawArgs(string(r.Args))}}
	h.Run(ctx, in, reportHook(ev, r.CallID))
}

// SessionStartHooks runs the session_start hooks; the server calls it
// once the session was announced, before its first turn. Their hook.ran
// events have no turn_id (and, outside a turn, are not stored).
func (s *Session) SessionStartHooks(ctx context.Context, emit Emit) {
	h := s.opts.Hooks
	if !h.Has(hooks.SessionStart, "") {
		return
	}
	h.Run(ctx, hooks.Input{Event: hooks.SessionStart}, reportHook(emit, ""))
}
