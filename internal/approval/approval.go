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
	AskOnRisk  Policy = "ask-on-risk"
	AskAlways  Policy = "ask-always"
	DenyOnRisk Policy = "deny-on-risk"
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
	case AskOnRisk, AskAlways, DenyOnRisk:
		return p, nil
	}
	if p, ok := Alias(s); ok {
		return p, nil
	}
	return "", fmt.Errorf("unknown approval policy %q (want ask-on-risk, ask-always or deny-on-risk)", s)
}

// Rank orders policies by strictness: ask-on-risk < ask-always <
// deny-on-risk (aliases rank as what they stand for); -1 for an unknown
// name.
func Rank(p Policy) int {
	if a, ok := Alias(string(p)); ok {
		p = a
	}
	switch p {
	case AskOnRisk:
		return 0
	case AskAlways:
		return 1
	case DenyOnRisk:
		return 2
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

func (d Decision) String() string {
	switch d {
	case Run:
		return "run"
	case Ask:
		return "ask"
	}
	return "deny"
}

// Decide applies the policy to a call's risk: ask-on-risk runs read_only
// calls and asks for the rest; ask-always asks for every call;
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
