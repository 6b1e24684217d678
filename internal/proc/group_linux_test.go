package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
)

// readPids waits (bounded) until file holds n PIDs and returns them; the
// processes are killed when the test ends.
func readPids(t *testing.T, file string, n int) []int {
	t.Helper()
	pids := testutil.WaitPIDs(t, file, n, 10*time.Second)
	if len(pids) < n {
		t.Fatalf("pidfile %s has %v, want %d pids", file, pids, n)
	}
	return pids
}

type runOut struct {
	res Result
	out string
}

// startBash runs script in the background and returns a channel with its end.
func startBash(t *testing.T, ctx context.Context, script string, mod func(*Spec)) <-chan runOut {
	t.Helper()
	done := make(chan runOut, 1)
	go func() {
		c := NewCapture(4096)
		s := Spec{Path: bash, Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: c, Stderr: c}
		if mod != nil {
			mod(&s)
		}
		res, err := Run(ctx, s)
		if err != nil {
			res.Signal = "run error: " + err.Error()
		}
		done <- runOut{res, c.String()}
	}()
	return done
}

func await(t *testing.T, done <-chan runOut, d time.Duration) runOut {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("Run did not return within %v", d)
		return runOut{}
	}
}

// awaitStarted waits for the end of a script that echoes started and
// exits 0, which must come within about 2 s of start (what says more
// about the run in the message).
func awaitStarted(t *testing.T, done <-chan runOut, start time.Time, what string) {
	t.Helper()
	r := await(t, done, 10*time.Second)
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("Run took %v%s, want about 2 s at most", took, what)
	}
	if diff := cmp.Diff(runOut{Result{ExitCode: intp(0)}, "started\n"}, r, ignoreDuration, cmp.AllowUnexported(runOut{})); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// TestCancelTermIgnored: the shell and its child ignore TERM; cancellation
// must still leave nothing alive 2.5 s later (TERM, 2 s, KILL).
func TestCancelTermIgnored(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := startBash(t, ctx, `trap '' TERM; sleep 600 & echo $! >> `+pidfile+`; echo $$ >> `+pidfile+`; wait`, nil)
	pids := readPids(t, pidfile, 2)
	cancel()
	cancelled := time.Now()
	if !testutil.WaitGone(2500*time.Millisecond, pids...) {
		t.Fatalf("processes %v still alive 2.5 s after cancellation", pids)
	}
	r := await(t, done, 5*time.Second)
	if diff := cmp.Diff(Result{Cancelled: true, Signal: "killed"}, r.res, ignoreDuration); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// TERM must have been tried first: nothing may die before the grace.
	if gone := time.Since(cancelled); gone < DefaultGrace {
		t.Errorf("TERM-ignoring processes were gone %v after cancel, before the %v grace", gone, DefaultGrace)
	}
}

// TestCancelTermHonoured: a group that obeys TERM ends at once with it.
func TestCancelTermHonoured(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := startBash(t, ctx, `sleep 600 & echo $! >> `+pidfile+`; echo $$ >> `+pidfile+`; wait`, nil)
	pids := readPids(t, pidfile, 2)
	cancel()
	r := await(t, done, 2500*time.Millisecond)
	if diff := cmp.Diff(Result{Cancelled: true, Signal: "terminated"}, r.res, ignoreDuration); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if testutil.AnyRunning(pids...) {
		t.Errorf("processes %v alive after Run returned", pids)
	}
}

// TestDeadlineKills: reaching the deadline KILLs the group at once, without
// a TERM first (the leader's death signal says which it got).
func TestDeadlineKills(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	done := startBash(t, t.Context(), `sleep 600 & echo $! >> `+pidfile+`; echo started; wait`, func(s *Spec) {
		s.Timeout = 300 * time.Millisecond
	})
	pids := readPids(t, pidfile, 1)
	r := await(t, done, 2*time.Second)
	if diff := cmp.Diff(runOut{Result{TimedOut: true, Signal: "killed"}, "started\n"}, r, ignoreDuration, cmp.AllowUnexported(runOut{})); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if testutil.AnyRunning(pids...) {
		t.Errorf("background child %v alive after the deadline kill", pids)
	}
}

// TestLeaderExitStopsGroup covers `sleep 600 & echo started` (a background
// child must not keep a call alive)
// and a double fork that stays in the group: both return within about 2 s
// with nothing left alive.
func TestLeaderExitStopsGroup(t *testing.T) {
	tests := []struct{ name, script string }{
		{"background child holds the pipe", `sleep 600 & echo $! > PIDFILE; echo started`},
		// The leader waits for the grandchild's PID: otherwise the group
		// stop after the leader's exit can race the double fork itself.
		{"double-forked child", `( (sleep 600 & echo $! > PIDFILE) & ); until [ -s PIDFILE ]; do sleep 0.01; done; echo started`},
		{"TERM-ignoring background child", `(trap '' TERM; exec sleep 600) & echo $! > PIDFILE; echo started`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			start := time.Now()
			done := startBash(t, t.Context(), strings.ReplaceAll(tt.script, "PIDFILE", pidfile), nil)
			pids := readPids(t, pidfile, 1)
			awaitStarted(t, done, start, "")
			if testutil.AnyRunning(pids...) {
				t.Errorf("child %v alive after Run returned", pids)
			}
		})
	}
}

// TestSetsidEscapee: a child that left the group with setsid and holds the
// output pipe cannot keep Run alive beyond the drain bound; an AfterExit
// sweep or a Tag stops it, and Run returns as soon as the pipe closes.
func TestSetsidEscapee(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		sweep     bool
		tag       bool
		wantAlive bool
	}{
		{name: "holding the pipe, no sweep", script: `setsid bash -c 'echo $$ > PIDFILE; exec sleep 600' &`, wantAlive: true},
		{name: "holding the pipe, AfterExit sweep", script: `setsid bash -c 'echo $$ > PIDFILE; exec sleep 600' &`, sweep: true},
		{name: "holding the pipe, tagged", script: `setsid bash -c 'echo $$ > PIDFILE; exec sleep 600' &`, tag: true},
		{name: "detached from the pipe, tagged", script: `setsid bash -c 'echo $$ > PIDFILE; exec sleep 600' >/dev/null 2>&1 &`, tag: true},
		{name: "tagged and ignoring TERM", script: `setsid bash -c 'trap "" TERM; echo $$ > PIDFILE; exec sleep 600' >/dev/null 2>&1 &`, tag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			script := strings.ReplaceAll(tt.script, "PIDFILE", pidfile) + ` echo started; while [ ! -s ` + pidfile + ` ]; do sleep 0.01; done`
			start := time.Now()
			var afterExit time.Time
			done := startBash(t, t.Context(), script, func(s *Spec) {
				if !tt.wantAlive {
					s.Grace = 500 * time.Millisecond // the no-sweep case keeps the default 2 s drain bound
				}
				if tt.tag {
					s.Tag = "SCV_PROC_TEST_TAG=" + strconv.FormatInt(time.Now().UnixNano(), 10)
				}
				s.AfterExit = func() {
					afterExit = time.Now()
					if tt.sweep {
						for _, pid := range readPids(t, pidfile, 1) {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				}
			})
			pids := readPids(t, pidfile, 1)
			awaitStarted(t, done, start, " with a setsid child")
			// The test's own sweep KILLs without waiting: give the kernel a
			// moment to finish the process after it closed the pipe.
			if alive := !testutil.WaitGone(500*time.Millisecond, pids...); alive != tt.wantAlive {
				t.Errorf("setsid child %v alive = %v after Run, want %v", pids, alive, tt.wantAlive)
			}
			if !tt.wantAlive {
				if after := time.Since(afterExit); after > time.Second {
					t.Errorf("Run returned %v after the escapee was stopped", after)
				}
			}
		})
	}
}

// TestNoZombiesNoLeakedFDs runs 1,000 sequential calls, some leaving a
// background child, and checks that no zombie child and no descriptor is
// left behind.
func TestNoZombiesNoLeakedFDs(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 processes")
	}
	fdsBefore := testutil.OpenFDs(t)
	for i := range 1000 {
		script := "echo $$"
		if i%50 == 0 {
			script = "sleep 600 & echo $$"
		}
		c := NewCapture(256)
		res, err := Run(t.Context(), Spec{Path: bash, Args: []string{"-c", script}, Stdout: c, Stderr: c})
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("call %d: %+v, %v, output %q", i, res, err, c)
		}
	}
	if z := zombieChildren(os.Getpid()); len(z) != 0 {
		t.Errorf("zombie children left: %v", z)
	}
	if after := testutil.OpenFDs(t); after != fdsBefore {
		t.Errorf("open descriptors %d before, %d after 1,000 calls", fdsBefore, after)
	}
}

func TestStopGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	done := startBash(t, context.Background(), `trap '' TERM; sleep 600 & echo $! >> `+pidfile+`; echo $$ >> `+pidfile+`; wait`, nil)
	pids := readPids(t, pidfile, 2)
	leader := pids[1]
	start := time.Now()
	StopGroup(leader, 200*time.Millisecond)
	if testutil.AnyRunning(pids...) {
		t.Errorf("processes %v alive after StopGroup", pids)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("StopGroup KILLed after %v, before the grace", took)
	}
	r := await(t, done, 5*time.Second)
	if r.res.Signal != "killed" {
		t.Errorf("leader ended with %+v, want killed", r.res)
	}
	StopGroup(leader, time.Hour) // an empty group returns at once
}
