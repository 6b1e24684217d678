// Package toolcall runs one tool call the same way wherever it comes from,
// the agent loop or `scv tools call`: look the tool up and validate the
// arguments, apply the approval policy to the call's risk, ask an approver
// when the policy says so, run the plan with a crash turned into a runtime
// error, and bound the result. Callers differ only in the approval.Approver
// they pass (the session's approval broker, or a command-line flag) and in
// what they tell their own clients before and after.
package toolcall

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/tool"
)

// Call is one tool call and what it runs against.
type Call struct {
	Registry *tool.Registry
	Policy   approval.Policy
	// Approve answers calls the policy asks about; nil denies them all.
	Approve approval.Approver
	// Env carries the workspace, the ids, the output limit (which also
	// bounds the final result) and the progress sink.
	Env  tool.Env
	Name string
	Args json.RawMessage
	// ReadOnly refuses every call whose risk is not read_only before the
	// check and the policy (a session in plan mode): nobody is asked, no
	// hook runs, and the result says "plan mode: read-only".
	ReadOnly bool
	// Check, when set, sees the validated plan before the policy and may
	// deny the call or force an approval (pre_tool hooks).
	Check func(ctx context.Context, plan tool.Plan) Verdict
	// Started, when set, is called once after approval, just before the
	// tool runs, with the plan that runs and how it was approved (asked
	// says a person saw the call; a zero approval.Answer with asked false
	// means the policy let it run unasked).
	Started func(plan tool.Plan, ans approval.Answer, asked bool)
}

// Verdict is a Check's judgement of a call.
type Verdict struct {
	// Deny stops the call; Reason (which the model sees) says why.
	Deny   bool
	Reason string
	// Ask makes the call need a person's approval even when the policy
	// would run it unasked (a denying policy still denies); AskReason
	// says why.
	Ask       bool
	AskReason string
}

// PlanRefusal is the result of a call Call.ReadOnly refused (the tool's
// name and the call's risk fill it in).
const PlanRefusal = "plan mode: read-only; the session is in plan mode, where only read-only tools run, so this %s call (risk %s) was not run. Do not retry it: finish the plan, and the user will leave plan mode to carry it out"

// Run validates, approves and runs c and returns the bounded result: what
// the model (or the user at the command line) sees. A tool that panics is a
// failure of the runtime, not of the call: Run then returns a failed result
// saying the tool crashed and an error, which ends an agent turn.
func Run(ctx context.Context, c Call) (tool.Result, error) {
	if c.Env.Ask == nil {
		c.Env.Ask = c.nested
	}
	if c.Env.AskAlone == nil {
		c.Env.AskAlone = c.unattended
	}
	plan, res, ok := c.Registry.Prepare(c.Env, c.Name, c.Args)
	if !ok {
		return Bound(res, c.Env.OutputLimit), nil
	}
	if c.ReadOnly && plan.Risk != tool.ReadOnly {
		return Bound(tool.Fail(tool.Denied, PlanRefusal, c.Name, plan.Risk), c.Env.OutputLimit), nil
	}
	var v Verdict
	if c.Check != nil {
		v = c.Check(ctx, plan)
		if v.Deny {
			return Bound(tool.Fail(tool.Denied, "denied: %s; do not retry this call unchanged", v.Reason), c.Env.OutputLimit), nil
		}
	}
	ans, asked, res, stop := c.approve(ctx, plan, v)
	if stop {
		return Bound(res, c.Env.OutputLimit), nil
	}
	if c.Started != nil {
		c.Started(plan, ans, asked)
	}
	res, err := runRecovered(ctx, c.Name, plan)
	return Bound(res, c.Env.OutputLimit), err
}

// approve applies the policy and, when it asks, the approver; asked says
// the approver was consulted, stop says the call must not run and res is
// its result.
func (c Call) approve(ctx context.Context, plan tool.Plan, v Verdict) (ans approval.Answer, asked bool, res tool.Result, stop bool) {
	decision := approval.DecidePlan(c.Policy, plan)
	if v.Ask && decision == approval.Run {
		decision = approval.Ask
	}
	switch decision {
	case approval.Deny:
		return ans, false, tool.Fail(tool.Denied, "denied: the approval policy %q does not allow %s calls (risk %s); do not retry this call", c.Policy, c.Name, plan.Risk), true
	case approval.Ask:
		asked = true
		if c.Approve != nil {
			req := approval.Request{CallID: c.Env.CallID, Name: c.Name, Risk: plan.Risk, Summary: plan.Summary, Plan: plan, Args: c.Args}
			if v.Ask {
				req.Forced = v.AskReason
			}
			ans = c.Approve(ctx, req)
		}
		switch {
		case ans.Approved:
		case ctx.Err() != nil:
			return ans, true, tool.Fail(tool.Cancelled, "cancelled: the turn was cancelled while the call awaited approval"), true
		case ans.Reason != "":
			return ans, true, tool.Fail(tool.Denied, "denied: the user did not approve this %s call. The user's reason: %s", c.Name, ans.Reason), true
		default:
			return ans, true, tool.Fail(tool.Denied, "denied: the user did not approve this %s call", c.Name), true
		}
	}
	if ctx.Err() != nil {
		return ans, asked, tool.Fail(tool.Cancelled, "cancelled before it started"), true
	}
	return ans, asked, tool.Result{}, false
}

// nested is the door of tool.Env.Ask: one step of a running call (a
// delegated agent's own permission request) goes through the policy and
// the approver exactly as a call does, under the call's name and id; no
// hook runs for it. A denial says why in words the agent's result can
// carry.
func (c Call) nested(ctx context.Context, step tool.Plan) (bool, string) {
	_, _, res, stop := c.approve(ctx, step, Verdict{})
	if !stop {
		return true, ""
	}
	return false, res.Output
}

// unattended is the door of tool.Env.AskAlone: the policy alone decides a
// step no one can be asked about (session grants, which a person gave
// for the turns they watch, are not consulted).
func (c Call) unattended(_ context.Context, step tool.Plan) (bool, string) {
	switch approval.DecidePlan(c.Policy, step) {
	case approval.Run:
		return true, ""
	case approval.Deny:
		return false, fmt.Sprintf("denied: the approval policy %q does not allow %s steps", c.Policy, step.Risk)
	}
	return false, fmt.Sprintf("denied: the approval policy %q asks a person about %s steps, and no one can be asked while the call runs as a background job", c.Policy, step.Risk)
}

// runRecovered runs the plan; a panicking tool becomes a failed result and
// an error (the process, and in the daemon every other session, lives on).
func runRecovered(ctx context.Context, name string, plan tool.Plan) (res tool.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res = tool.Fail(tool.Failed, "the %s tool crashed", name)
			err = fmt.Errorf("tool %s crashed: %v", name, v)
		}
	}()
	return plan.Run(ctx), nil
}

// Bound caps a result at limit bytes (0: no limit) as the last line of
// defence: tools fit their own output first, so this cut only meets a tool
// that did not. The cut result is text, marked truncated, and says how much
// of it is shown.
func Bound(res tool.Result, limit int) tool.Result {
	if limit <= 0 || len(res.Output) <= limit {
		return res
	}
	cut := tool.TruncateUTF8(res.Output, limit-64)
	res.Output = cut + fmt.Sprintf("\n[output cut: %d of %d bytes shown]", len(cut), len(res.Output))
	res.Truncated = true
	res.JSON = false
	return res
}
