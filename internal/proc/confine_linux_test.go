package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// noNewPrivsThreads lists the threads of this process that have
// no_new_privs set (the mark TestConfineReachesOnlyTheChild confines with:
// irreversible, and shown per thread in /proc).
func noNewPrivsThreads(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread ended meanwhile
		}
		if strings.Contains(string(b), "\nNoNewPrivs:\t1\n") {
			marked = append(marked, d)
		}
	}
	return marked
}

// TestConfineReachesOnlyTheChild checks Spec.Confine: the child inherits
// what Confine did to the thread it was started from, and that thread never
// serves this process again, so after many confined starts (and while
// other goroutines keep the runtime busy) no thread of the test process is
// marked.
func TestConfineReachesOnlyTheChild(t *testing.T) {
	if len(noNewPrivsThreads(t)) > 0 {
		t.Skip("this process already runs with no_new_privs")
	}
	confine := func() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	busy := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { busy <- struct{}{} }()
			for ctx.Err() == nil {
				_, _ = os.Stat("/proc/self/status") // system calls that hand threads over
			}
		}()
	}
	for i := range 20 {
		res, c := runBash(t, t.Context(), "grep NoNewPrivs /proc/self/status", func(s *Spec) { s.Confine = confine })
		if res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(c.String(), "NoNewPrivs:\t1") {
			t.Fatalf("start %d: the child was not confined: %+v %q", i, res, c.String())
		}
	}
	stop()
	for range 4 {
		<-busy
	}
	// A discarded thread ends just after the start returns: wait for it.
	deadline := time.Now().Add(30 * time.Second)
	for marked := noNewPrivsThreads(t); len(marked) > 0; marked = noNewPrivsThreads(t) {
		if time.Now().After(deadline) {
			t.Fatalf("threads of this process still confined after the starts: %v (pid %d)", marked, os.Getpid())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfineFailureStartsNothing checks that a Confine error is the start's
// error and no child runs.
func TestConfineFailureStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	boom := errors.New("boom")
	_, err := Run(t.Context(), Spec{Path: bash, Args: []string{"-c", "touch " + marker}, Env: []string{"PATH=/usr/bin:/bin"},
		Confine: func() error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("Run = %v, want the Confine error", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the child ran although Confine failed")
	}
}
