package approval

import (
	"context"

	"github.com/google/uuid"
)

// Announce tells the session's client about the pending approval id: what
// approval.requested carries. The broker calls it after registering id, so
// an answer can never arrive early.
type Announce func(ctx context.Context, id string, req Request)

// Approver is the session's approver, the one door every approval of a
// tool call goes through: the call itself, one a check forced
// (Request.Forced) and a running call's nested step (tool.Env.Ask). A
// session grant or allow rule that covers the call answers it without
// asking, unless the approval was forced; otherwise the broker offers a
// grant where one may apply, announces the request under a new id and
// waits for Resolve's answer, or for ctx's end (a zero Answer).
func (b *Broker) Approver(announce Announce) Approver {
	return func(ctx context.Context, r Request) Answer {
		r.Call = CallOf(r.Name, r.Plan)
		// An approval a hook or a deny rule forced is a person's to give:
		// no grant answers it, and none is offered.
		if r.Forced != "" {
			r.Why = r.Forced
		} else {
			if g, rule, ok := b.allowed(r.Call); ok {
				a := Answer{Approved: true, GrantID: g.ID}
				if rule {
					a.Rule = &g
				}
				return a
			}
			r.Offer, r.Why = b.Explain(r.Call)
		}
		id := "ap_" + uuid.NewString()[:8]
		ans, answered := b.Wait(ctx, id, r, func() {
			if announce != nil {
				announce(ctx, id, r)
			}
		})
		if !answered {
			return Answer{}
		}
		return ans
	}
}
