package daemon

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// scripted is a runtime whose counters the test sets.
type scripted struct {
	s     memSample
	freed int
	// afterFree is what retained drops to when memory is given back.
	afterFree uint64
}

func (f *scripted) read() memSample { return f.s }
func (f *scripted) free()           { f.freed++; f.s.retained = f.afterFree }

// step advances the scripted runtime by alloc bytes allocated and
// retained bytes held, then ticks.
func step(r *reclaimer, f *scripted, alloc, retained uint64) bool {
	f.s.allocs += alloc
	f.s.retained = retained
	_, _, ok := r.tick()
	return ok
}

// Memory goes back once the daemon has been quiet for quietTicks ticks and
// holds more than the slack above its floor; once per quiet spell; never
// while it is busy; never for a daemon that stays small.
func TestReclaimerGivesBackOnlyAfterAQuietBurst(t *testing.T) {
	const mib = 1 << 20
	f := &scripted{s: memSample{retained: 10 * mib}, afterFree: 12 * mib}
	r := newReclaimer(f.read, f.free)

	for i := range 10 { // a busy burst: allocating fast, growing
		if step(r, f, 50*mib, uint64(20+10*i)*mib) {
			t.Fatalf("gave memory back while busy (tick %d)", i)
		}
	}
	for i := range quietTicks - 1 { // quiet, but not for long enough yet
		if step(r, f, 0, 110*mib) {
			t.Fatalf("gave memory back after only %d quiet ticks", i+1)
		}
	}
	if !step(r, f, 0, 110*mib) || f.freed != 1 {
		t.Fatalf("did not give memory back after %d quiet ticks holding 110 MiB (freed %d)", quietTicks, f.freed)
	}
	for range 5 { // still quiet: once per spell
		step(r, f, 1, 40*mib)
	}
	if f.freed != 1 {
		t.Fatalf("gave memory back %d times in one quiet spell, want 1", f.freed)
	}

	// Busy again, then quiet, but holding less than the slack above the
	// new floor (12 MiB): nothing to give back.
	step(r, f, 50*mib, 20*mib)
	for range quietTicks + 2 {
		step(r, f, 0, 12*mib+reclaimSlack-1)
	}
	if f.freed != 1 {
		t.Fatalf("gave memory back holding less than the slack above the floor (freed %d)", f.freed)
	}

	// A second burst above the slack is given back again.
	step(r, f, 50*mib, 80*mib)
	for range quietTicks {
		step(r, f, 0, 80*mib)
	}
	if f.freed != 2 {
		t.Fatalf("second burst: freed %d, want 2", f.freed)
	}
}

// A running turn is never interrupted: however long the allocation rate
// stays low, nothing is given back until no turn runs.
func TestReclaimerWaitsForNoTurnRunning(t *testing.T) {
	const mib = 1 << 20
	f := &scripted{s: memSample{retained: 10 * mib}, afterFree: 12 * mib}
	r := newReclaimer(f.read, f.free)
	busy := true
	r.idle = func() bool { return !busy }
	for range 3 * quietTicks {
		step(r, f, 0, 100*mib)
	}
	if f.freed != 0 {
		t.Fatalf("gave memory back %d times while a turn ran", f.freed)
	}
	busy = false
	for range quietTicks {
		step(r, f, 0, 100*mib)
	}
	if f.freed != 1 {
		t.Fatalf("freed %d times after %d idle ticks, want 1", f.freed, quietTicks)
	}
}

// sink keeps the burst's allocations reachable until the test drops them.
var sink [][]byte

// With the real runtime: after a burst of 64 MiB that is then dropped, a
// quiet spell gives the memory back to the kernel.
func TestReclaimerWithTheRuntime(t *testing.T) {
	read := runtimeMem()
	debug.FreeOSMemory()
	r := newReclaimer(read, debug.FreeOSMemory)
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	for i := range sink {
		sink[i][0] = 1 // touch: the pages are really the process's
	}
	sink = nil
	held := read().retained
	if held < r.floor+reclaimSlack {
		t.Fatalf("the burst did not raise what the runtime holds: %d MiB, floor %d MiB", held>>20, r.floor>>20)
	}
	r.tick() // the tick that sees the burst's allocations is not quiet
	var before, after uint64
	var ok bool
	for range quietTicks {
		before, after, ok = r.tick()
	}
	runtime.KeepAlive(sink)
	if !ok {
		t.Fatalf("no give-back after %d quiet ticks holding %d MiB (floor %d MiB)", quietTicks, held>>20, r.floor>>20)
	}
	if before-after < 32<<20 {
		t.Errorf("gave back %d MiB of a 64 MiB burst (held %d MiB, now %d MiB)", (before-after)>>20, before>>20, after>>20)
	}
}
