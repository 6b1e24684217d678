// Package approval decides, per call, whether a tool call runs, is denied,
// or needs a person's answer (docs/runtime.md, "Approvals and risk"),
// brokers the pending approvals of a session, and keeps the session's
// grants: the answers "allow for this session" that let later matching
// calls run without asking.
package approval

import (
	"fmt"

	"github.com/scv-agent/scv/internal/tool"
)

// Policy is tools.approval_policy.
type Policy string

// Policies, from most permissive to strictest. Each name says what happens
// to a call that has a risk (is not read_only): it is asked about, every
// call is asked about, or it is denied without asking.
const (
	// AskUnsandboxed is ask-on-risk, except that a call the OS sandbox
	// confines without network (tool.Plan.Confined) runs unasked.
	AskUnsandboxed Policy = "ask-unsandboxed"
	AskOnRisk      Policy = "ask-on-risk"
	AskAlways      Policy = "ask-always"
	DenyOnRisk     Policy = "deny-on-risk"
)

// Alias returns the policy an old name stands for. The first names
// (on-risk, always, never) are still accepted but deprecated: "never" read
// as "never ask, run everything" to users of other agents, when it means
// the opposite.
func Alias(s string) (Policy, bool) {
	switch s {
	case "on-risk":
		return AskOnRisk, true
	case "always":
		return AskAlways, true
	case "never":
		return DenyOnRisk, true
	}
	return "", false
}

// Parse validates a policy name; a deprecated alias gives the policy it
// stands for.
func Parse(s string) (Policy, error) {
	switch p := Policy(s); p {
	case AskUnsandboxed, AskOnRisk, AskAlways, DenyOnRisk:
		return p, nil
	}
	if p, ok := Alias(s); ok {
		return p, nil
	}
	return "", fmt.Errorf("unknown approval policy %q (want ask-on-risk, ask-always, deny-on-risk or ask-unsandboxed)", s)
}

// Rank orders policies by strictness: ask-unsandboxed < ask-on-risk <
// ask-always < deny-on-risk (aliases rank as what they stand for); -1 for
// an unknown name.
func Rank(p Policy) int {
	if a, ok := Alias(string(p)); ok {
		p = a
	}
	switch p {
	case AskUnsandboxed:
		return 0
	case AskOnRisk:
		return 1
	case AskAlways:
		return 2
	case DenyOnRisk:
		return 3
	}
	return -1
}

// Decision is what the policy says about one call.
type Decision int

// Decisions.
const (
	Run Decision = iota
	Ask
	Deny
)

// String is the decision's word, so that %v of a Decision (in a test's
// failure message, a log attribute) reads run, ask or deny rather than a
// number; no production path formats one today, and a Stringer costs
// nothing to keep.
func (d Decision) String() string {
	switch d {
	case Run:
		return "run"
	case Ask:
		return "ask"
	}
	return "deny"
}

// DecidePlan applies the policy to a planned call: under ask-unsandboxed a
// call the sandbox confines without network runs unasked; everything else
// is Decide on its risk.
func DecidePlan(p Policy, plan tool.Plan) Decision {
	if p == AskUnsandboxed && plan.Confined {
		return Run
	}
	return Decide(p, plan.Risk)
}

// Decide applies the policy to a call's risk: ask-on-risk (and
// ask-unsandboxed, for calls that are not confined) runs read_only calls
// and asks for the rest; ask-always asks for every call;
// deny-on-risk runs read_only calls and denies the rest without asking.
func Decide(p Policy, risk tool.Risk) Decision {
	if a, ok := Alias(string(p)); ok {
		p = a
	}
	switch p {
	case AskAlways:
		return Ask
	case DenyOnRisk:
		if risk == tool.ReadOnly {
			return Run
		}
		return Deny
	default:
		if risk == tool.ReadOnly {
			return Run
		}
		return Ask
	}
}
