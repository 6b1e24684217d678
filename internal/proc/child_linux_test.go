package proc

import (
	"bufio"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
)

func startChild(t *testing.T, script string, mod func(*Spec)) *Child {
	t.Helper()
	s := Spec{Path: bash, Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Grace: 300 * time.Millisecond}
	if mod != nil {
		mod(&s)
	}
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		c.Stdin.Close()
		c.Stdout.Close()
	})
	return c
}

func waitDone(t *testing.T, c *Child, d time.Duration) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(d):
		t.Fatalf("child %d not done within %v", c.PID(), d)
	}
}

// TestChildPipes: what the child reads on stdin it can answer on stdout;
// closing stdin ends a well-behaved child, and its stderr reaches the
// writer.
func TestChildPipes(t *testing.T) {
	errs := NewCapture(1024)
	c := startChild(t, `echo ready >&2; while read -r line; do echo "got $line"; done; exit 3`, func(s *Spec) { s.Stderr = errs })
	r := bufio.NewReader(c.Stdout)
	if _, err := io.WriteString(c.Stdin, "one\n"); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil || line != "got one\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	c.Stdin.Close()
	waitDone(t, c, 5*time.Second)
	res := c.Result()
	if res.ExitCode == nil || *res.ExitCode != 3 || res.Cancelled {
		t.Errorf("result = %+v, want exit 3, not cancelled", res)
	}
	if got := errs.String(); got != "ready\n" {
		t.Errorf("stderr = %q", got)
	}
}

// TestChildLastWordsReadable: output written right before the leader exits
// stays readable after Done (os/exec's own pipes would be closed by Wait).
func TestChildLastWordsReadable(t *testing.T) {
	c := startChild(t, `printf 'last words\n'; exit 0`, nil)
	waitDone(t, c, 5*time.Second)
	b, err := io.ReadAll(c.Stdout)
	if err != nil || string(b) != "last words\n" {
		t.Fatalf("stdout after exit = %q, %v", b, err)
	}
}

// TestChildStop: Stop ends a leader that ignores TERM, a background member
// of its group and a setsid escapee carrying the tag, within about two grace
// periods, and says Cancelled.
func TestChildStop(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	script := `trap '' TERM; sleep 600 & echo $! >> ` + pidfile + `; ` +
		`setsid bash -c 'trap "" TERM; echo $$ >> ` + pidfile + `; exec sleep 600' </dev/null >/dev/null 2>&1 & ` +
		`echo $$ >> ` + pidfile + `; while :; do sleep 1; done`
	c := startChild(t, script, func(s *Spec) {
		s.Tag = "SCV_PROC_CHILD_TEST=" + strconv.FormatInt(time.Now().UnixNano(), 10)
	})
	pids := readPids(t, pidfile, 3)
	began := time.Now()
	c.Stop()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Stop took %v", took)
	}
	if !testutil.WaitGone(time.Second, pids...) {
		t.Fatalf("processes %v survived Stop", pids)
	}
	if res := c.Result(); !res.Cancelled || res.Signal == "" {
		t.Errorf("result = %+v, want cancelled by a signal", res)
	}
	c.Stop() // a second Stop is harmless
}

// TestChildLeaderExitStopsGroup: when the leader exits by itself, what it
// left in its group is stopped before Done closes.
func TestChildLeaderExitStopsGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	c := startChild(t, `sleep 600 & echo $! > `+pidfile+`; exit 0`, nil)
	waitDone(t, c, 5*time.Second)
	pids := readPids(t, pidfile, 1)
	if !testutil.WaitGone(time.Second, pids...) {
		t.Fatalf("background member %v survived the leader", pids)
	}
	if res := c.Result(); res.Cancelled || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("result = %+v", res)
	}
}

func TestChildStartFailure(t *testing.T) {
	fds := testutil.OpenFDs(t)
	_, err := Start(Spec{Path: "/nonexistent/server"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/server") {
		t.Fatalf("err = %v", err)
	}
	if after := testutil.OpenFDs(t); after != fds {
		t.Errorf("descriptors %d before, %d after a failed start", fds, after)
	}
}

// TestChildStopAfterExitNotCancelled: Stop called while the clean-up of a
// leader that exited by itself is still running (here, its group member
// ignores TERM for the grace period) does not make the result Cancelled:
// the exit status is what happened.
func TestChildStopAfterExitNotCancelled(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	c := startChild(t, `(trap '' TERM; echo $BASHPID > `+pidfile+`; exec sleep 600) & while [ ! -s `+pidfile+` ]; do sleep 0.01; done; exit 5`, nil)
	readPids(t, pidfile, 1)
	deadline := time.Now().Add(5 * time.Second)
	for testutil.AnyRunning(c.PID()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c.Stop()
	if res := c.Result(); res.Cancelled || res.ExitCode == nil || *res.ExitCode != 5 {
		t.Errorf("result = %+v, want exit 5, not cancelled", res)
	}
}
