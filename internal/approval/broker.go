package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/scv-agent/scv/internal/tool"
)

// MaxReasonBytes bounds the reason a person gives with a denial.
const MaxReasonBytes = 2000

// Errors of Resolve.
var (
	// ErrNotPending: no approval with that id awaits an answer.
	ErrNotPending = errors.New("no such approval is pending")
	// ErrNoGrant: the call cannot be allowed for the session.
	ErrNoGrant = errors.New("this call cannot be allowed for the session")
)

// Request is one approval as it travels, from the tool-call path
// (toolcall.Run fills in the call the policy asks a person about) through
// the broker's approver (Broker.Approver adds what it matches and offers)
// to the announcement a client answers.
type Request struct {
	CallID string
	Name   string
	Risk   tool.Risk
	// Summary is the plan's own account of what the call would do: the
	// full command, URL or path.
	Summary string
	// Plan is the whole plan: its diff, its command (what a session grant
	// matches) and whether a grant may cover it at all.
	Plan tool.Plan
	// Args are the call's arguments as the model sent them.
	Args json.RawMessage
	// Forced says a check (a pre_tool hook, a deny rule that cannot judge
	// the call) asked for a person's approval: no session grant may answer
	// it, and none is offered. Its text is why.
	Forced string

	// Call is the call being approved: a confirmed prefix must begin its
	// command, a confirmed path must hold its paths.
	Call Call
	// Offer is the grant an approver may ask for instead of a one-time
	// approval (ID empty); nil when the call can never be allowed for the
	// session.
	Offer *Grant
	// Why says in one line why the call is asked although the session has
	// grants of its tool, why the offer is narrower than usual or missing,
	// or why a check forced the approval ("" when there is nothing to say).
	Why string
}

// Answer is the answer to one approval: what a person said (Approved and
// the fields after it, from approval.resolve) and what the broker added
// (Granted), or the grant or rule that approved the call without asking
// anyone (GrantID, Rule).
type Answer struct {
	Approved bool
	// Session asks, with an approval, for a grant that allows later
	// matching calls of this session too.
	Session bool
	// Prefix is the command prefix the approver confirmed for a grant of a
	// command call; empty takes the offer's.
	Prefix string
	// Exact asks, for a command call, for a grant of this exact command
	// only, without the offered prefix.
	Exact bool
	// Path is the file or directory the approver confirmed for a grant of
	// a write; empty takes the offer's.
	Path string
	// Save asks, with an approval, for a saved rule ("always (save
	// rule)"): the session grant it would give, written to the user config
	// as an allow rule so later sessions have it too.
	Save bool
	// Reason is the approver's reason for a denial, told to the model in
	// the failed result.
	Reason string
	// Granted is set by Resolve on the answer the waiting call gets: the
	// session grant the answer added (or the equal one already held), or
	// the rule it saved (Source set).
	Granted *Grant
	// GrantID names the session grant or rule that approved the call
	// without asking anyone ("" when a person answered).
	GrantID string
	// Rule is the saved rule that approved the call without asking (its
	// id is GrantID); nil otherwise.
	Rule *Grant
}

// Approver answers one Request. It may block until a person answers or ctx
// ends; a call whose context has ended while it waited is cancelled rather
// than denied.
type Approver func(ctx context.Context, req Request) Answer

type waiter struct {
	ch  chan Answer
	req Request
}

// Broker holds the pending approvals and the grants of one session. Grants
// live only as long as the broker: they are never stored.
type Broker struct {
	mu      sync.Mutex
	pending map[string]*waiter
	grants  []Grant
	nextID  int
	// books hold the saved rules; workspace picks those of the session.
	books     []*RuleBook
	workspace string
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{pending: map[string]*waiter{}} }

// Wait registers id, calls announce (which tells the client), and blocks
// until Resolve answers it or ctx ends; ok is false when ctx ended first.
// Registering before announcing means an answer can never arrive early.
func (b *Broker) Wait(ctx context.Context, id string, req Request, announce func()) (ans Answer, ok bool) {
	w := &waiter{ch: make(chan Answer, 1), req: req}
	b.mu.Lock()
	b.pending[id] = w
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
	case a := <-w.ch:
		return a, true
	case <-ctx.Done():
		return Answer{}, false
	}
}

// Resolve answers a pending approval. A session grant is checked and
// added before the waiting call goes on, so the next matching call already
// finds it. A refused answer (an error other than ErrNotPending) leaves
// the approval pending.
func (b *Broker) Resolve(id string, a Answer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.pending[id]
	if !ok {
		return ErrNotPending
	}
	if len(a.Reason) > MaxReasonBytes {
		return fmt.Errorf("the reason is %d bytes; at most %d are accepted", len(a.Reason), MaxReasonBytes)
	}
	if a.Approved && a.Reason != "" {
		return errors.New("a reason goes with a denial only")
	}
	if !a.Session && !a.Save && (a.Prefix != "" || a.Exact || a.Path != "") {
		return errors.New("a prefix, exact or path goes with a session grant or a saved rule only")
	}
	switch {
	case a.Save && a.Session:
		return errors.New("a saved rule and a session grant exclude each other: a saved rule applies to this session too")
	case a.Save:
		if !a.Approved {
			return errors.New("a saved rule needs approved true")
		}
		if why := never(w.req.Call); why != "" || w.req.Offer == nil {
			return ErrNoGrant
		}
		r, err := ruleFor(w.req, a)
		if err != nil {
			return err
		}
		// "Always" is for this workspace: the rule names it, so another
		// project is asked again (edit the file to widen it).
		r.Workspace = b.workspace
		r, err = b.saveBook().Save(r)
		if err != nil {
			return err
		}
		a.Granted = &r
	case a.Session:
		if !a.Approved {
			return errors.New("a session grant needs approved true")
		}
		g, err := grantFor(w.req, a)
		if err != nil {
			return err
		}
		g = b.add(g)
		a.Granted = &g
	}
	delete(b.pending, id)
	w.ch <- a
	return nil
}

// CancelPending calls cancel while id is still pending and reports whether
// it was: how "deny and cancel the turn" stays one step (cancel ends the
// turn's context, so the waiting call sees a cancellation, never a plain
// denial that would let the turn go on).
func (b *Broker) CancelPending(id string, cancel func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[id]; !ok || cancel == nil {
		return false
	}
	cancel()
	return true
}

// Pending reports whether id awaits an answer.
func (b *Broker) Pending(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[id]
	return ok
}

// Grants lists the session's grants, oldest first.
func (b *Broker) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.grants)
}

// Revoke removes a grant; false when there is none with that id.
func (b *Broker) Revoke(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, g := range b.grants {
		if g.ID == id {
			b.grants = slices.Delete(b.grants, i, i+1)
			return true
		}
	}
	return false
}
