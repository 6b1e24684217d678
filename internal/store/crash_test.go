package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashAtRandomPoints SIGKILLs a process writing turns at random
// moments, again and again on the same file: the file always opens and
// passes SQLite's integrity check, every turn the process reported
// completed is stored whole, no turn is half-applied (its history is there
// exactly when it is completed), the turn that was running is marked
// interrupted, and every turn the process reported begun is stored with the
// events it reported flushed. -short runs 15 kills; the full run 100, within a time budget
// (at least 15 kills).
func TestCrashAtRandomPoints(t *testing.T) {
	iterations, budget := 100, 20*time.Second
	switch {
	case testing.Short():
		iterations = 15
	case raceEnabled:
		budget = 30 * time.Second
	}
	path := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, path, func(o *Options) { o.Alive = processAlive })
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, NewSession{ID: "crash", Workspace: "/ws", Origin: OriginExec}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "crash"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 12))
	reported := map[string]bool{} // turns a child said were completed
	// Turns a child said were begun, and the seq up to which it said a
	// turn's events were flushed: both must survive the kill.
	begun, flushed := map[string]bool{}, map[string]uint64{}
	start := time.Now()
	killedMidTurn, interrupted := 0, 0
	turnTime := 10 * time.Millisecond
	i := 0
	for ; i < iterations; i++ {
		if i >= 15 && time.Since(start) > budget {
			t.Logf("time budget reached after %d kills", i)
			break
		}
		before := len(reported)
		cmd, lines := startChild(t, "crasher", path, "crash", 0)
		// One kill in five lands during start-up (open, lease takeover);
		// the others anywhere in the first few turns after it, scaled to
		// how long a turn takes on this machine.
		window := max(20*time.Millisecond, 4*turnTime)
		wait := time.Duration(rng.Int64N(int64(window)))
		early := rng.IntN(5) == 0
		ready := false
		timer := time.NewTimer(wait + 30*time.Second)
		if early {
			timer.Reset(wait / 4)
		}
		var lastLine time.Time
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				if strings.HasPrefix(l, "ready") && !ready {
					ready = true
					lastLine = time.Now()
					if !early {
						timer.Reset(wait)
					}
				}
				if tid, ok := strings.CutPrefix(l, "completed "); ok {
					reported[tid] = true
					// A moving average of the time per turn.
					turnTime = (3*turnTime + time.Since(lastLine)) / 4
					lastLine = time.Now()
				}
				if tid, ok := strings.CutPrefix(l, "begun "); ok {
					begun[tid] = true
				}
				if rest, ok := strings.CutPrefix(l, "flushed "); ok {
					var tid string
					var seq uint64
					fmt.Sscan(rest, &tid, &seq)
					flushed[tid] = seq
				}
				if strings.HasPrefix(l, "error") {
					t.Fatalf("kill %d: child failed: %s", i, l)
				}
			case <-timer.C:
				cmd.Process.Signal(syscall.SIGKILL)
				timer.Reset(time.Hour)
			}
		}
		timer.Stop()
		cmd.Wait()
		if ready && !early && len(reported) == before {
			// No turn completed in the window: turns are slower here
			// (the race detector, a loaded machine); widen it.
			turnTime = min(2*turnTime, time.Second)
		}
		if _, err := s.Recover(ctx); err != nil {
			t.Fatalf("kill %d: recover: %v", i, err)
		}
		n := checkCrashFile(t, s, i, reported)
		checkBegun(t, s, i, begun, flushed)
		if n > interrupted {
			killedMidTurn++
		}
		interrupted = n
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills in %v, %d of them while a turn was running; %d turns reported completed; %v per turn", i, time.Since(start).Round(time.Millisecond), killedMidTurn, len(reported), turnTime.Round(time.Millisecond/10))
	if len(reported) == 0 {
		t.Error("no child ever completed a turn: the kills came too early to test anything")
	}
}

// checkBegun verifies after kill i that every turn a child reported begun
// is stored (completed, or interrupted if the kill came before its end), and
// that the events it reported flushed are stored with it.
func checkBegun(t *testing.T, s *Store, i int, begun map[string]bool, flushed map[string]uint64) {
	t.Helper()
	l, err := s.Load(context.Background(), "crash", LoadOptions{})
	if err != nil {
		t.Fatalf("kill %d: load: %v", i, err)
	}
	stored := map[string]Turn{}
	for _, tr := range l.Turns {
		stored[tr.ID] = tr
	}
	for tid := range begun {
		tr, ok := stored[tid]
		if !ok {
			t.Errorf("kill %d: turn %s was reported begun but is not stored", i, tid)
			continue
		}
		if tr.State != TurnCompleted && tr.State != TurnInterrupted {
			t.Errorf("kill %d: begun turn %s is %s", i, tid, tr.State)
		}
		if seq, ok := flushed[tid]; ok && (len(tr.Events) == 0 || tr.Events[len(tr.Events)-1].Seq < seq) {
			t.Errorf("kill %d: turn %s was flushed up to seq %d, but %d events are stored", i, tid, seq, len(tr.Events))
		}
	}
}

// checkFileIntegrity opens the file afresh and runs SQLite's own check of
// all of it, then FTS5's check that the search index holds exactly the
// turns that are not running (callers make sure none is). A fresh
// connection matters: FTS5's part of the check trusts an index structure
// cached by the connection, and on a connection that read the index before
// another process changed it, it reports corruption that is not there
// (queries on that connection do revalidate and are right).
func checkFileIntegrity(t *testing.T, path string) {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// checkCrashFile verifies the file after kill i; it returns the number of
// interrupted turns.
func checkCrashFile(t *testing.T, s *Store, i int, reported map[string]bool) int {
	t.Helper()
	ctx := context.Background()
	checkFileIntegrity(t, s.Path())
	l, err := s.Load(ctx, "crash", LoadOptions{})
	if err != nil {
		t.Fatalf("kill %d: load: %v", i, err)
	}
	var completed []string
	interrupted := 0
	stored := map[string]bool{}
	for _, tr := range l.Turns {
		switch tr.State {
		case TurnCompleted:
			completed = append(completed, tr.ID)
			stored[tr.ID] = true
			if len(tr.Events) != childEvents || tr.Answer != "answer of "+tr.ID {
				t.Errorf("kill %d: completed turn %s has %d events, answer %q", i, tr.ID, len(tr.Events), tr.Answer)
			}
		case TurnInterrupted:
			if tr.ErrorCode != InterruptedCode || tr.Ended.IsZero() {
				t.Errorf("kill %d: interrupted turn %s: %+v", i, tr.ID, tr)
			}
			interrupted++
		default:
			t.Errorf("kill %d: turn %s is %s after recovery", i, tr.ID, tr.State)
		}
	}
	for tid := range reported {
		if !stored[tid] {
			t.Errorf("kill %d: turn %s was reported completed but is not stored completed", i, tid)
		}
	}
	// The history is exactly the messages of the completed turns, in order:
	// nothing of an interrupted turn, nothing missing.
	if len(l.History) != 2*len(completed) {
		t.Fatalf("kill %d: %d history messages for %d completed turns", i, len(l.History), len(completed))
	}
	for k, tid := range completed {
		for j := range 2 {
			var m struct{ Content string }
			if err := json.Unmarshal(l.History[2*k+j], &m); err != nil || m.Content != tid {
				t.Errorf("kill %d: history message %d is %s, want one of turn %s", i, 2*k+j, l.History[2*k+j], tid)
			}
		}
	}
	if l.Session.Lease != nil {
		t.Errorf("kill %d: the dead child's lease is still there: %+v", i, l.Session.Lease)
	}
	if want := fmt.Sprint(len(l.Turns)); fmt.Sprint(l.Session.Turns) != want {
		t.Errorf("kill %d: session counts %d turns, %s stored", i, l.Session.Turns, want)
	}
	return interrupted
}
