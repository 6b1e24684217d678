package approval

import (
	"context"
	"sync"
)

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
