package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProcessesWriteAtOnce runs several real processes writing turns to one
// file while this process reads: no lock error may reach any of them and no
// turn may be lost.
func TestProcessesWriteAtOnce(t *testing.T) {
	procs, turns := 3, 200
	switch {
	case testing.Short():
		turns = 40
	case raceEnabled:
		turns = 100
	}
	path := filepath.Join(t.TempDir(), "state", "scv.db")
	s := openAt(t, path, func(o *Options) { o.Alive = processAlive })
	type result struct {
		lines []string
		err   error
	}
	results := make(chan result, procs)
	for p := range procs {
		cmd, lines := startChild(t, "writer", path, fmt.Sprint("w", p), turns)
		go func() {
			var r result
			for l := range lines {
				r.lines = append(r.lines, l)
			}
			r.err = cmd.Wait()
			results <- r
		}()
	}
	// Read while they write: list, load and search must not fail either.
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	finished := 0
	var reads int
	for finished < procs {
		select {
		case r := <-results:
			finished++
			out := strings.Join(r.lines, "\n")
			if r.err != nil || strings.Contains(out, "error") {
				t.Errorf("writer failed: %v\n%s", r.err, out)
			}
			if len(r.lines) == 0 || r.lines[len(r.lines)-1] != "done" {
				t.Errorf("writer did not finish: %s", out)
			}
		default:
			if time.Now().After(deadline) {
				t.Fatal("writers still running after 2 minutes")
			}
			if _, err := s.ListSessions(ctx, ListOptions{}); err != nil {
				t.Errorf("list while writing: %v", err)
			}
			if _, err := s.Load(ctx, "w0", LoadOptions{TailTurns: 5}); err != nil && !strings.Contains(err.Error(), "not found") {
				t.Errorf("load while writing: %v", err)
			}
			if _, err := s.Search(ctx, "prompt", SearchOptions{Limit: 5}); err != nil {
				t.Errorf("search while writing: %v", err)
			}
			reads++
		}
	}
	t.Logf("%d processes × %d turns, %d read rounds meanwhile", procs, turns, reads)
	for p := range procs {
		checkWriterSession(t, s, fmt.Sprint("w", p), turns)
	}
}

// checkWriterSession checks that a child's session holds exactly n
// completed turns, each whole.
func checkWriterSession(t *testing.T, s *Store, sid string, n int) {
	t.Helper()
	l, err := s.Load(context.Background(), sid, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Turns) != n || len(l.History) != 2*n || l.Session.LastSeq != uint64(n*childEvents) {
		t.Fatalf("%s: %d turns, %d history messages, last seq %d; want %d, %d, %d", sid, len(l.Turns), len(l.History), l.Session.LastSeq, n, 2*n, n*childEvents)
	}
	for i, tr := range l.Turns {
		want := fmt.Sprintf("%s-t%d", sid, i+1)
		if tr.ID != want || tr.State != TurnCompleted || len(tr.Events) != childEvents {
			t.Errorf("%s turn %d: %s %s with %d events", sid, i+1, tr.ID, tr.State, len(tr.Events))
		}
		var m struct{ Content string }
		if err := json.Unmarshal(l.History[2*i], &m); err != nil || m.Content != want {
			t.Errorf("%s history message %d = %s", sid, 2*i, l.History[2*i])
		}
	}
}

// TestLockHeldTooLong: a write lock held by another process for longer
// than the busy timeout reaches the caller as ErrLocked, saying what
// happened, and the write is not applied; once the lock is gone it works.
func TestLockHeldTooLong(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scv.db")
	a := openAt(t, path, func(o *Options) { o.BusyTimeout = 300 * time.Millisecond })
	other := openAt(t, path, nil)
	tx, err := other.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = a.CreateSession(ctx, NewSession{ID: "s1", Workspace: "/ws", Origin: OriginExec})
	waited := time.Since(start)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "create session") {
		t.Fatalf("write under a held lock: %v, want ErrLocked naming the operation", err)
	}
	if waited < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the busy timeout", waited)
	}
	tx.Rollback()
	if _, err := a.Session(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed write left a session: %v", err)
	}
	mustSession(t, a, "s1")
}
