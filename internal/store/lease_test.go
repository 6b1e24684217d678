package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// twoProcesses opens one file as two holders; alive decides which holders
// count as running.
func twoProcesses(t *testing.T, alive func(Holder) bool) (a, b *Store) {
	path := filepath.Join(t.TempDir(), "scv.db")
	a = openAt(t, path, func(o *Options) { o.Alive = alive })
	b = openAt(t, path, func(o *Options) {
		o.Alive = alive
		o.Holder = Holder{Instance: "/home/u/.scv", PID: 200, Start: 9, Name: "scv exec"}
	})
	return a, b
}

func TestLeaseIsExclusive(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t, func(Holder) bool { return true })
	mustSession(t, a, "s1")
	if _, err := b.BeginTurn(ctx, "s1", "t1", "p"); !errors.As(err, new(*BusyError)) {
		t.Errorf("turn in a session held elsewhere: %v", err)
	}
	x, err := a.Acquire(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if x.Lease == nil || !x.Lease.same(self) || x.LeasedAt.IsZero() {
		t.Fatalf("lease after acquire = %+v", x.Lease)
	}
	if _, err := a.Acquire(ctx, "s1"); err != nil {
		t.Errorf("re-acquire by the holder: %v", err)
	}
	_, err = b.Acquire(ctx, "s1")
	var be *BusyError
	if !errors.As(err, &be) || !be.Holder.same(self) {
		t.Fatalf("second acquire: %v, want a BusyError naming the holder", err)
	}
	for _, want := range []string{"session s1", "daemon (pid 100, /home/u/.scv)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("busy error %q does not contain %q", err, want)
		}
	}
	if err := b.Delete(ctx, "s1"); !errors.As(err, &be) {
		t.Errorf("delete of a live session from another process: %v", err)
	}
	// Release by a non-holder changes nothing; by the holder frees it.
	if err := b.Release(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "s1"); !errors.As(err, &be) {
		t.Errorf("acquire after a foreign release: %v", err)
	}
	if err := a.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "s1"); err != nil {
		t.Errorf("acquire after release: %v", err)
	}
}

func TestLeaseTakeoverInterruptsRunningTurn(t *testing.T) {
	ctx := context.Background()
	dead := map[int]bool{}
	a, b := twoProcesses(t, func(h Holder) bool { return !dead[h.PID] })
	mustSession(t, a, "s1")
	if _, err := a.Acquire(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	seq := runTurn(t, a, "s1", "t1", "p1", "a1", 0)
	tl := startTurn(t, a, "s1", "t2", "p2", seq)
	dead[self.PID] = true
	if _, err := b.Acquire(ctx, "s1"); err != nil {
		t.Fatalf("takeover from a dead holder: %v", err)
	}
	got, err := b.Turn(ctx, "s1", "t2")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != TurnInterrupted || got.ErrorCode != InterruptedCode || len(got.Events) != 1 {
		t.Errorf("turn after takeover = %+v", got)
	}
	// The old holder, not dead after all, must not complete it silently.
	err = tl.Complete(ctx, Completion{})
	var se *StateError
	if !errors.As(err, &se) || se.State != TurnInterrupted {
		t.Errorf("complete after takeover: %v, want a StateError", err)
	}
	if h, _ := b.History(ctx, "s1"); len(h) != 2 {
		t.Errorf("history after the interrupted turn has %d messages, want 2", len(h))
	}
	// The new holder goes on.
	runTurn(t, b, "s1", "t3", "p3", "a3", seq+10)
}

func TestRecover(t *testing.T) {
	ctx := context.Background()
	dead := map[int]bool{}
	a, b := twoProcesses(t, func(h Holder) bool { return !dead[h.PID] })
	mustSession(t, a, "live")
	for _, id := range []string{"deadheld", "unheld", "idle"} {
		mustSession(t, b, id)
	}
	for _, c := range []struct {
		s  *Store
		id string
	}{{a, "live"}, {b, "deadheld"}, {b, "unheld"}} {
		if _, err := c.s.BeginTurn(ctx, c.id, "t1", "p"); err != nil {
			t.Fatal(err)
		}
	}
	// A lease given up while a turn runs: a bug of the caller, which
	// Recover repairs as well.
	if err := b.Release(ctx, "unheld"); err != nil {
		t.Fatal(err)
	}
	dead[200] = true
	r, err := a.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r != (Recovery{Turns: 2, Leases: 2}) {
		t.Errorf("recovery = %+v, want 2 turns (deadheld, unheld) and 2 leases (deadheld, idle)", r)
	}
	for id, want := range map[string]TurnState{"live": TurnRunning, "deadheld": TurnInterrupted, "unheld": TurnInterrupted} {
		got, err := a.Turn(ctx, id, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != want {
			t.Errorf("%s: turn %s, want %s", id, got.State, want)
		}
	}
	if x, _ := a.Session(ctx, "idle"); x.Lease != nil {
		t.Errorf("dead lease kept: %+v", x.Lease)
	}
	if r, err := a.Recover(ctx); err != nil || r != (Recovery{}) {
		t.Errorf("second recovery = %+v, %v", r, err)
	}
}
