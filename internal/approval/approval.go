// Package approval decides, per call, whether a tool call runs, is denied,
// or needs a person's answer (docs/runtime.md, "Approvals and risk"), and
// brokers the pending
// approvals of a session.
package approval

import (
	"context"
	"fmt"
	"sync"

	"github.com/scv-agent/scv/internal/tool"
)

// Policy is tools.approval_policy.
type Policy string

// Policies, from most permissive to strictest.
const (
	OnRisk Policy = "on-risk"
	Always Policy = "always"
	Never  Policy = "never"
)

// Parse validates a policy name.
func Parse(s string) (Policy, error) {
	switch p := Policy(s); p {
	case OnRisk, Always, Never:
		return p, nil
	}
	return "", fmt.Errorf("unknown approval policy %q (want on-risk, always or never)", s)
}

// Rank orders policies by strictness: on-risk < always < never.
func Rank(p Policy) int {
	switch p {
	case OnRisk:
		return 0
	case Always:
		return 1
	case Never:
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

// Decide applies the policy to a call's risk: on-risk runs read_only calls
// and asks for the rest; always asks for every call; never runs read_only
// calls and denies the rest without asking.
func Decide(p Policy, risk tool.Risk) Decision {
	switch p {
	case Always:
		return Ask
	case Never:
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

// Broker holds the pending approvals of one session.
type Broker struct {
	mu      sync.Mutex
	pending map[string]chan bool
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{pending: map[string]chan bool{}} }

// Wait registers id, calls announce (which tells the client), and blocks
// until Resolve answers it or ctx ends; a cancelled wait is a denial.
// Registering before announcing means an answer can never arrive early.
func (b *Broker) Wait(ctx context.Context, id string, announce func()) bool {
	ch := make(chan bool, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	if announce != nil {
		announce()
	}
	defer func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}()
	select {
	case ok := <-ch:
		return ok
	case <-ctx.Done():
		return false
	}
}

// Resolve answers a pending approval; false means no such approval is
// pending.
func (b *Broker) Resolve(id string, approved bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch, ok := b.pending[id]
	if !ok {
		return false
	}
	delete(b.pending, id)
	ch <- approved
	return true
}

// Pending reports whether id awaits an answer.
func (b *Broker) Pending(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[id]
	return ok
}
