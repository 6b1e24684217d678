package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// Grant is one "allow for this session" answer: later calls of Tool with
// Risk run without asking, and for a command tool only the commands that
// start with Prefix (see MatchPrefix).
type Grant struct {
	ID     string
	Tool   string
	Risk   tool.Risk
	Prefix string
}

// Request is what the broker knows of a pending approval.
type Request struct {
	// Offer is the grant an approver may ask for instead of a one-time
	// approval (ID empty); nil when the call can never be allowed for the
	// session.
	Offer *Grant
	// Command is the call's command line when it runs one (bash); a grant
	// prefix must be a prefix of its words.
	Command string
}

// Answer is a person's answer to one approval.
type Answer struct {
	Approved bool
	// Session asks, with an approval, for a grant that allows later
	// matching calls of this session too.
	Session bool
	// Prefix is the command prefix the approver confirmed for a grant of a
	// command call; empty takes the offer's.
	Prefix string
	// Reason is the approver's reason for a denial, told to the model.
	Reason string
	// Granted is set by Resolve on the answer the waiting call gets: the
	// session grant the answer added (or the equal one already held).
	Granted *Grant
}

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
	if !a.Session && a.Prefix != "" {
		return errors.New("a prefix goes with a session grant only")
	}
	if a.Session {
		if !a.Approved {
			return errors.New("a session grant needs approved true")
		}
		g, err := grantFor(w.req, a.Prefix)
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

// grantFor is the grant an answer asks for, checked against the request.
func grantFor(req Request, prefix string) (Grant, error) {
	if req.Offer == nil {
		return Grant{}, ErrNoGrant
	}
	g := *req.Offer
	if g.Prefix == "" {
		if prefix != "" {
			return Grant{}, errors.New("a prefix applies to command calls only")
		}
		return g, nil
	}
	if prefix != "" {
		if err := CheckPrefix(prefix, req.Command); err != nil {
			return Grant{}, err
		}
		g.Prefix = NormalPrefix(prefix)
	}
	return g, nil
}

// add keeps g unless an equal grant exists, and returns the grant kept.
func (b *Broker) add(g Grant) Grant {
	for _, o := range b.grants {
		if o.Tool == g.Tool && o.Risk == g.Risk && o.Prefix == g.Prefix {
			return o
		}
	}
	b.nextID++
	g.ID = "g" + strconv.Itoa(b.nextID)
	b.grants = append(b.grants, g)
	return g
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

// Allowed finds a grant that covers a call of toolName with risk (and
// command, for a command tool). Calls whose tool says no grant may cover
// them (noGrant) are never covered.
func (b *Broker) Allowed(toolName string, risk tool.Risk, command string, noGrant bool) (Grant, bool) {
	if noGrant {
		return Grant{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range b.grants {
		if g.Tool != toolName || g.Risk != risk {
			continue
		}
		if g.Prefix == "" && command == "" || g.Prefix != "" && MatchPrefix(g.Prefix, command) {
			return g, true
		}
	}
	return Grant{}, false
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

// Offer is the grant a call may be given: nil when its tool says no grant
// may cover it, or when it runs a command whose first word is not a plain
// word (no prefix can be proposed).
func Offer(toolName string, risk tool.Risk, command string, noGrant bool) *Grant {
	if noGrant {
		return nil
	}
	g := &Grant{Tool: toolName, Risk: risk}
	if command != "" {
		g.Prefix = ProposePrefix(command)
		if g.Prefix == "" {
			return nil
		}
	}
	return g
}
