package daemon

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"
)

// Memory given back after a burst. The Go runtime keeps the heap it grew
// to: garbage is collected only when allocation asks for it (or every two
// minutes) and freed pages go back to the kernel slowly, so a daemon that
// served 200 sessions holds its peak RSS long after they closed. When the
// daemon has been quiet for quietTicks ticks in a row (no turn running,
// and less than quietAllocBytes allocated in each tick) and holds more
// than reclaimSlack above what it held after its last give-back, it
// collects and returns the free pages at once (debug.FreeOSMemory), once
// per quiet spell. An idle single-user daemon never crosses the slack, so
// it pays nothing; a busy one is never interrupted.
const (
	reclaimTick     = 2 * time.Second
	quietTicks      = 3
	quietAllocBytes = 4 << 20
	reclaimSlack    = 16 << 20
)

// memSample is what the reclaimer reads of the runtime: bytes allocated
// since start (cumulative) and bytes the runtime holds from the kernel
// and has not released.
type memSample struct {
	allocs, retained uint64
}

// reclaimer decides when to give memory back; read and free are the
// runtime's in the daemon and scripted in tests.
type reclaimer struct {
	read func() memSample
	free func()
	// idle says no turn is running (nil: only the allocation rate counts).
	idle  func() bool
	last  memSample
	floor uint64 // retained after the last give-back (or at start)
	quiet int
	spent bool // gave back in this quiet spell already
}

func newReclaimer(read func() memSample, free func()) *reclaimer {
	r := &reclaimer{read: read, free: free}
	r.last = read()
	r.floor = r.last.retained
	return r
}

// tick takes one sample and gives memory back if the daemon is quiet and
// holds more than reclaimSlack above the floor. It returns the retained
// bytes before and after a give-back (ok false when there was none).
func (r *reclaimer) tick() (before, after uint64, ok bool) {
	s := r.read()
	if s.allocs-r.last.allocs >= quietAllocBytes || r.idle != nil && !r.idle() {
		r.quiet, r.spent = 0, false
	} else {
		r.quiet++
	}
	r.last = s
	if r.spent || r.quiet < quietTicks || s.retained < r.floor+reclaimSlack {
		return 0, 0, false
	}
	r.free()
	r.spent = true
	r.last = r.read()
	r.floor = r.last.retained
	return s.retained, r.floor, true
}

// runtimeMem reads the runtime's own counters. runtime.ReadMemStats stops
// the world for a moment (microseconds at this heap's size, once per
// tick); runtime/metrics would not, but its package initialisation costs
// every scv process 15 KB at start-up.
func runtimeMem() func() memSample {
	return func() memSample {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return memSample{allocs: m.TotalAlloc, retained: m.Sys - min(m.HeapReleased, m.Sys)}
	}
}

// reclaimLoop gives memory back after bursts until ctx ends.
func reclaimLoop(ctx context.Context, every time.Duration, idle func() bool, logger *slog.Logger) {
	r := newReclaimer(runtimeMem(), debug.FreeOSMemory)
	r.idle = idle
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if before, after, ok := r.tick(); ok {
			logger.Debug("gave memory back after a burst", "held_mib", before>>20, "now_mib", after>>20)
		}
	}
}
