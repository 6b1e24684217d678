package proc

import (
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A leafPool keeps the making and the removal of cgroup leaves off a
// child's critical path: a few empty leaves are made in advance (one more
// in the background each time one is taken), and the leaf of a finished
// child, once it is known to be empty, is removed in the background. What
// stops processes (the kill, the wait for the leaf to be empty) always
// runs before the child's result is returned; only the rmdir of an empty
// leaf waits. Both are bounded, and Close waits for whatever is pending
// and removes the ready leaves: nothing outlives the Containment. The
// zero value is ready for use.
type leafPool struct {
	mu      sync.Mutex
	ready   []*leaf
	filling bool // a goroutine is making ready leaves
	closed  bool
	pending int // removals running in the background
	wg      sync.WaitGroup
	seq     atomic.Uint64
	log     *slog.Logger
}

const (
	// poolReady is how many empty leaves are kept ready: enough for a few
	// calls at once; beyond, a leaf is made on the spot.
	poolReady = 3
	// poolRemovals bounds the removals running in the background; beyond,
	// a leaf is removed before its child's result is returned.
	poolRemovals = 8
)

// takeLeaf gives a leaf for a child about to start: a ready one when the
// pool has one (pooled then says so), else one made now. Taking one has
// the pool make another in the background.
func (p containPlatform) takeLeaf() (l *leaf, pooled bool, err error) {
	q := p.pool
	if q == nil {
		return nil, false, errNoCgroup
	}
	q.mu.Lock()
	if n := len(q.ready); n > 0 {
		l, q.ready = q.ready[n-1], q.ready[:n-1]
	}
	q.refillLocked(p)
	q.mu.Unlock()
	if l != nil {
		l.hasKill = p.hasKill
		return l, true, nil
	}
	l, err = p.newLeaf(q.seq.Add(1))
	return l, false, err
}

// freshLeaf makes a leaf now, outside the pool (a ready one turned out to
// be unusable).
func (p containPlatform) freshLeaf() (*leaf, error) {
	if p.pool == nil {
		return nil, errNoCgroup
	}
	return p.newLeaf(p.pool.seq.Add(1))
}

func (q *leafPool) refillLocked(p containPlatform) {
	if q.closed || q.filling || len(q.ready) >= poolReady {
		return
	}
	q.filling = true
	q.wg.Add(1)
	go q.fill(p)
}

// fill makes leaves until the pool holds poolReady or is closed; a
// failure ends it (the next take tries again, and makes its own leaf).
func (q *leafPool) fill(p containPlatform) {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if q.closed || len(q.ready) >= poolReady {
			q.filling = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		l, err := p.newLeaf(q.seq.Add(1))
		q.mu.Lock()
		if err != nil || q.closed {
			q.filling = false
			q.mu.Unlock()
			if err == nil {
				_ = l.remove()
			} else if q.log != nil {
				q.log.Debug("cannot make a cgroup leaf in advance", "err", err)
			}
			return
		}
		q.ready = append(q.ready, l)
		q.mu.Unlock()
	}
}

// releaseLeaf removes the leaf of a child that has ended: at once when
// processes may still be in it (they are killed first), or when the pool
// is closed or has poolRemovals removals pending; else in the background.
func (p containPlatform) releaseLeaf(l *leaf) error {
	l.closeFD()
	if !l.empty {
		return l.remove()
	}
	q := p.pool
	if q == nil {
		return removeCgroupTree(l.dir)
	}
	q.mu.Lock()
	if q.closed || q.pending >= poolRemovals {
		q.mu.Unlock()
		return removeCgroupTree(l.dir)
	}
	q.pending++
	q.wg.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.wg.Done()
		err := removeCgroupTree(l.dir)
		if err != nil && q.log != nil {
			q.log.Warn("cannot remove a call's cgroup", "cgroup", l.dir, "err", err)
		}
		q.mu.Lock()
		q.pending--
		q.mu.Unlock()
	}()
	return nil
}

// close stops the pool: it waits for the leaves being made and removed,
// then removes the ready ones. Leaves taken later are made and removed on
// the spot.
func (p containPlatform) close() {
	q := p.pool
	if q == nil {
		return
	}
	q.mu.Lock()
	q.closed = true
	ready := q.ready
	q.ready = nil
	q.mu.Unlock()
	q.wg.Wait()
	for _, l := range ready {
		if err := l.remove(); err != nil && q.log != nil {
			q.log.Warn("cannot remove a ready cgroup", "cgroup", l.dir, "err", err)
		}
	}
}

// stale says a start failed because the leaf it was to be born in is
// gone (removed from outside, with the directory it was in, say); the
// kernel then refuses to start a process in it.
func (l *leaf) stale() bool {
	_, err := os.Stat(l.dir)
	return err != nil
}

func (l *leaf) closeFD() {
	if l.fd > 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
}

func (p containPlatform) setLogger(log *slog.Logger) {
	if p.pool != nil {
		p.pool.log = log
	}
}
