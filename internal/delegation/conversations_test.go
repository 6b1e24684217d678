package delegation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClockAt() *fakeClock                 { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func newReg(c *fakeClock, max int) *Registry {
	return NewRegistry(RegistryOptions{Max: max, Idle: time.Hour, Now: c.now})
}
func start(t *testing.T, r *Registry, agent, vendor string) Conversation {
	t.Helper()
	c, ok, err := r.Start("s1", agent, "/w").Done(context.Background(), vendor)
	if err != nil || !ok {
		t.Fatalf("new %s conversation: %v %v", agent, ok, err)
	}
	return c
}

func TestConversationHandlesAndTurns(t *testing.T) {
	ctx := context.Background()
	clk := newClockAt()
	r := newReg(clk, 8)
	if c := start(t, r, "codex", "th-1"); c.Handle != "codex-1" || c.Turns != 1 {
		t.Fatalf("first = %+v", c)
	}
	if c := start(t, r, "claude", "u-1"); c.Handle != "claude-1" {
		t.Fatalf("claude's first = %+v", c)
	}
	if c := start(t, r, "codex", "th-2"); c.Handle != "codex-2" {
		t.Fatalf("second codex = %+v", c)
	}
	// A run that reported no id makes no conversation and takes no number.
	if _, ok, err := r.Start("s1", "codex", "/w").Done(ctx, ""); ok || err != nil {
		t.Fatalf("no vendor id: ok %v err %v", ok, err)
	}
	if c := start(t, r, "codex", "th-3"); c.Handle != "codex-3" {
		t.Fatalf("third codex = %+v", c)
	}
	clk.advance(time.Minute)
	l, err := r.Acquire(ctx, "s1", "codex", "codex-1", "", "call-9")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.Conversation(); !ok || c.VendorID != "th-1" || c.Cwd != "/w" {
		t.Fatalf("acquired %+v %v", c, ok)
	}
	c, ok, err := l.Done(ctx, "th-1b")
	if err != nil || !ok || c.Turns != 2 || c.VendorID != "th-1b" || !c.Used.Equal(clk.t) {
		t.Fatalf("second turn = %+v %v %v", c, ok, err)
	}
	// Another session numbers its own.
	if c, _, _ := r.Start("s2", "codex", "/w").Done(ctx, "x"); c.Handle != "codex-1" {
		t.Errorf("other session's first = %+v", c)
	}
}

func TestConversationRefusals(t *testing.T) {
	ctx := context.Background()
	clk := newClockAt()
	r := newReg(clk, 8)
	start(t, r, "codex", "th-1")
	cases := []struct {
		name, agent, handle, cwd, want string
	}{
		{"unknown", "codex", "codex-7", "", "unknown conversation codex-7 in this SCV session (it has codex-1)"},
		{"other agent", "claude", "codex-1", "", "codex-1 is a conversation with agent_codex, not agent_claude"},
		{"other directory", "codex", "codex-1", "/w/sub", "conversation codex-1 runs in /w, not /w/sub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Acquire(ctx, "s1", tc.agent, tc.handle, tc.cwd, "c")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := r.Acquire(ctx, "s1", "codex", "codex-1", "/w", "c"); err != nil {
		t.Errorf("the same directory given explicitly: %v", err)
	}
}

func TestConversationBusy(t *testing.T) {
	ctx := context.Background()
	r := newReg(newClockAt(), 8)
	start(t, r, "pi", "p-1")
	l, err := r.Acquire(ctx, "s1", "pi", "pi-1", "", "call-A")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Acquire(ctx, "s1", "pi", "pi-1", "", "call-B")
	var busy *BusyError
	if !errors.As(err, &busy) || busy.CallID != "call-A" || !strings.Contains(err.Error(), "call call-A is still running") {
		t.Fatalf("second acquire: %v", err)
	}
	if r.Busy("s1", "pi-1") != "call-A" {
		t.Errorf("Busy = %q", r.Busy("s1", "pi-1"))
	}
	l.Release()
	l.Release() // idempotent
	l2, err := r.Acquire(ctx, "s1", "pi", "pi-1", "", "call-B")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if _, _, err := l2.Done(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l2.Done(ctx, ""); err == nil {
		t.Error("a lease ended twice")
	}
}

func TestConversationLRUEviction(t *testing.T) {
	ctx := context.Background()
	clk := newClockAt()
	r := newReg(clk, 3)
	for _, v := range []string{"a", "b", "c"} {
		start(t, r, "codex", v)
		clk.advance(time.Second)
	}
	// codex-1 is used again: codex-2 becomes the least recently used.
	l, _ := r.Acquire(ctx, "s1", "codex", "codex-1", "", "x")
	l.Done(ctx, "")
	// codex-3 has a turn running: never evicted under it.
	busy, _ := r.Acquire(ctx, "s1", "codex", "codex-3", "", "running")
	clk.advance(time.Second)
	if c := start(t, r, "codex", "d"); c.Handle != "codex-4" {
		t.Fatalf("fourth = %+v", c)
	}
	_, err := r.Acquire(ctx, "s1", "codex", "codex-2", "", "y")
	var closed *ClosedError
	if !errors.As(err, &closed) || closed.Conversation.ClosedWhy != ClosedEvicted || !strings.Contains(err.Error(), "agent.max_conversations = 3") {
		t.Fatalf("evicted conversation: %v", err)
	}
	all, _ := r.List(ctx, "s1")
	live := 0
	for _, c := range all {
		if c.Live() {
			live++
		}
		if c.Handle == "codex-2" && c.VendorID != "" {
			t.Errorf("a closed conversation keeps its vendor id %q", c.VendorID)
		}
	}
	if live != 3 || len(all) != 4 {
		t.Errorf("%d live of %d, want 3 of 4: %+v", live, len(all), all)
	}
	// With every other one busy, none can make room.
	r2 := newReg(clk, 1)
	start(t, r2, "pi", "p")
	hold, _ := r2.Acquire(ctx, "s1", "pi", "pi-1", "", "z")
	var lim *LimitError
	if _, _, err := r2.Start("s1", "pi", "/w").Done(ctx, "q"); !errors.As(err, &lim) {
		t.Errorf("no room: %v", err)
	}
	hold.Release()
	busy.Release()
}

func TestConversationIdleExpiry(t *testing.T) {
	ctx := context.Background()
	clk := newClockAt()
	r := newReg(clk, 8)
	start(t, r, "claude", "u")
	clk.advance(time.Hour) // exactly the limit: still live
	l, err := r.Acquire(ctx, "s1", "claude", "claude-1", "", "a")
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	l.Done(ctx, "")
	clk.advance(time.Hour + time.Second)
	if all, _ := r.List(ctx, "s1"); all[0].Live() || all[0].ClosedWhy != ClosedExpired {
		t.Errorf("List shows %+v", all[0])
	}
	_, err = r.Acquire(ctx, "s1", "claude", "claude-1", "", "b")
	var closed *ClosedError
	if !errors.As(err, &closed) || closed.Conversation.ClosedWhy != ClosedExpired || !strings.Contains(err.Error(), "idle for more than 3600 s") {
		t.Fatalf("expired: %v", err)
	}
	if c := start(t, r, "claude", "v"); c.Handle != "claude-2" {
		t.Errorf("a new one after expiry = %+v (handles are never reused)", c)
	}
}

func TestValidConversationHandle(t *testing.T) {
	for h, want := range map[string]bool{
		"codex-1": true, "claude-12": true, "pi-3": true,
		"codex-0": false, "codex-01": false, "codex": false, "-1": false, "codex-": false,
		"01a22893-7c56-7193-afe1-c4ed07749e5c": false, "340ddb02-f1f4-4160-adbd-2bcb17be8553": false,
		"/home/u/.pi/agent/sessions/x.jsonl": false, "Codex-1": false, "codex-1 ": false, "codex-a1b2c3": false,
	} {
		if got := ValidConversationHandle(h); got != want {
			t.Errorf("ValidConversationHandle(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestConversationLimitsView: a view with a session's own bounds shares
// the running turns.
func TestConversationLimitsView(t *testing.T) {
	ctx := context.Background()
	clk := newClockAt()
	r := newReg(clk, 8)
	v := r.WithLimits(1, time.Minute)
	if v.Max() != 1 || v.Idle() != time.Minute || r.Max() != 8 {
		t.Fatalf("limits %d/%v, base %d", v.Max(), v.Idle(), r.Max())
	}
	c := start(t, v, "codex", "a")
	l, err := r.Acquire(ctx, "s1", "codex", c.Handle, "", "call-1")
	if err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if _, err := v.Peek(ctx, "s1", "codex", c.Handle, ""); !errors.As(err, &busy) {
		t.Errorf("the view does not see the base's running turn: %v", err)
	}
	l.Release()
	clk.advance(2 * time.Minute)
	if _, err := v.Peek(ctx, "s1", "codex", c.Handle, ""); err == nil {
		t.Error("the view's idle bound is not applied")
	}
}
