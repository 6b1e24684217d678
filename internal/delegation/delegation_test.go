package delegation

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/testutil"
)

// The test binary doubles as an owning SCV process that starts a
// delegation and is then SIGKILLed (TestOrphanReaped).
func TestMain(m *testing.M) {
	if os.Getenv("SCV_DELEGATION_TEST_OWNER") != "" {
		os.Exit(ownerHelper())
	}
	os.Exit(m.Run())
}

// escapeeScript starts a setsid descendant (writing its PID to $1) and
// sleeps; both carry the SCV_PARENT tag from the environment.
const escapeeScript = `setsid sleep 300 & echo $! > "$1"; sleep 300`

func ownerHelper() int {
	tr, err := New(Options{Dir: os.Getenv("SCV_DELEGATION_TEST_DIR")})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	h, _ := tr.NewHandle("codex")
	pidFile := os.Getenv("SCV_DELEGATION_TEST_PIDFILE")
	_, err = proc.Run(context.Background(), proc.Spec{
		Path: "/bin/bash", Args: []string{"-c", escapeeScript, "x", pidFile},
		Env: []string{"PATH=" + os.Getenv("PATH"), EnvParent + "=" + Tag("", "inst", "s1", h), EnvDepth + "=1"},
		OnStart: func(pid int) {
			if err := tr.Start(Record{Handle: h, Agent: "codex", Session: "s1", Cwd: "/", Depth: 1, PID: pid}); err != nil {
				fmt.Println("error", err)
				return
			}
			go func() {
				for !testutil.WaitFile(pidFile, 5*time.Second) {
				}
				fmt.Println("ready", h, pid)
			}()
		},
	})
	fmt.Println("error run ended", err)
	return 1
}

func readPID(t *testing.T, p string) (int, uint64) {
	t.Helper()
	pid, err := strconv.Atoi(testutil.WaitLine(t, p, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	st, err := proc.StartTime(pid)
	if err != nil {
		t.Fatalf("start time of %d: %v", pid, err)
	}
	return pid, st
}

// assertGone fails unless every process is gone within 2.5 s.
func assertGone(t *testing.T, ids ...ident) {
	t.Helper()
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) && anyAlive(ids) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range ids {
		if proc.Alive(id.pid, id.start) {
			t.Errorf("pid %d survived", id.pid)
			syscall.Kill(id.pid, syscall.SIGKILL)
		}
	}
}

func newTracker(t *testing.T) *Tracker {
	t.Helper()
	tr, err := New(Options{Dir: filepath.Join(t.TempDir(), "home", "run", "delegations")})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTimedOutRunSetsidDescendantKilled(t *testing.T) {
	tr := newTracker(t)
	h, err := tr.NewHandle("claude")
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	var leader ident
	var recorded Record
	res, err := proc.Run(t.Context(), proc.Spec{
		Path: "/bin/bash", Args: []string{"-c", escapeeScript, "x", pidFile},
		Env:     []string{"PATH=" + os.Getenv("PATH"), EnvParent + "=" + Tag("", "i", "s", h)},
		Timeout: time.Second,
		OnStart: func(pid int) {
			if err := tr.Start(Record{Handle: h, Agent: "claude", Session: "s", Cwd: "/tmp", Depth: 1, PID: pid}); err != nil {
				t.Error(err)
			}
			leader.pid = pid
			leader.start, _ = proc.StartTime(pid)
			recorded, _ = tr.Read(h)
			st, _ := os.Stat(tr.path(h))
			dst, _ := os.Stat(tr.Dir())
			pst, _ := os.Stat(filepath.Dir(tr.Dir()))
			if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 || pst.Mode().Perm() != 0o700 {
				t.Errorf("modes: record %v, dir %v, run %v", st.Mode(), dst.Mode(), pst.Mode())
			}
		},
		AfterExit: func() { tr.Sweep(h) },
	})
	if err != nil || !res.TimedOut {
		t.Fatalf("run: %+v %v", res, err)
	}
	esc, escStart := readPID(t, pidFile)
	_ = escStart
	tr.Finish(h)
	assertGone(t, leader, ident{esc, escStart})
	if _, err := os.Stat(tr.path(h)); !os.IsNotExist(err) {
		t.Errorf("record not removed: %v", err)
	}
	self, _ := proc.StartTime(os.Getpid())
	want := Record{Handle: h, Agent: "claude", Session: "s", Cwd: "/tmp", Depth: 1, PID: leader.pid, PIDStart: leader.start,
		OwnerPID: os.Getpid(), OwnerStart: self, StartedAt: recorded.StartedAt}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

func TestOrphanReaped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "delegations")
	pidFile := filepath.Join(t.TempDir(), "pid")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command(exe, "-test.run=^$")
	owner.Env = append(os.Environ(), "SCV_DELEGATION_TEST_OWNER=1", "SCV_DELEGATION_TEST_DIR="+dir, "SCV_DELEGATION_TEST_PIDFILE="+pidFile)
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" {
		owner.Process.Kill()
		owner.Wait()
		t.Fatalf("owner said %q: %v", line, err)
	}
	handle := f[1]
	agentPID, _ := strconv.Atoi(f[2])
	agentStart, _ := proc.StartTime(agentPID)
	esc, escStart := readPID(t, pidFile)

	tr, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := tr.List(false); len(l) != 1 || l[0].Orphan || !l[0].AgentAlive {
		t.Fatalf("before the kill: %+v", l)
	}
	// Reconcile leaves a live owner's run alone.
	if n, err := tr.Reconcile(t.Context()); n != 0 || err != nil {
		t.Fatalf("reconcile with a live owner: %d %v", n, err)
	}
	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()

	if l, _ := tr.List(false); len(l) != 0 {
		t.Errorf("ps lists an orphan without --all: %+v", l)
	}
	l, _ := tr.List(true)
	if len(l) != 1 || l[0].Handle != handle || !l[0].Orphan {
		t.Fatalf("ps --all: %+v", l)
	}
	n, err := tr.Reconcile(t.Context())
	if n != 1 || err != nil {
		t.Fatalf("reconcile: %d %v", n, err)
	}
	assertGone(t, ident{agentPID, agentStart}, ident{esc, escStart})
	if l, _ := tr.List(true); len(l) != 0 {
		t.Errorf("records left: %+v", l)
	}
	if c := tr.Counts(); c != (Counts{Running: 0, OrphansReaped: 1}) {
		t.Errorf("counts %+v", c)
	}
}

func TestKillNeverSignalsReusedPID(t *testing.T) {
	tr := newTracker(t)
	// An untagged process whose recorded start time does not match stands
	// for a PID that was reused after the agent exited.
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	st, _ := proc.StartTime(cmd.Process.Pid)
	h := "codex-abc123"
	if err := tr.write(Record{Handle: h, Agent: "codex", PID: cmd.Process.Pid, PIDStart: st + 1, OwnerPID: 1 << 22, OwnerStart: 1}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Kill(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if !proc.Alive(cmd.Process.Pid, st) {
		t.Fatal("a process whose start time does not match was signalled")
	}
	if _, err := tr.Read(h); err == nil {
		t.Error("orphan record not removed by kill")
	}
	if err := tr.Kill(t.Context(), "nope"); err == nil {
		t.Error("kill of an invalid handle succeeded")
	}
	if err := tr.Kill(t.Context(), "codex-ffffff"); err == nil {
		t.Error("kill of a missing handle succeeded")
	}
}

func TestKillOrphans(t *testing.T) {
	tr := newTracker(t)
	self, _ := proc.StartTime(os.Getpid())
	live := Record{Handle: "pi-000001", Agent: "pi", OwnerPID: os.Getpid(), OwnerStart: self}
	dead := Record{Handle: "pi-000002", Agent: "pi", OwnerPID: os.Getpid(), OwnerStart: self + 1}
	for _, r := range []Record{live, dead} {
		if err := tr.write(r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tr.Dir(), "pi-000003.json"), []byte("{garbage"), 0o600)
	n, err := tr.KillOrphans(t.Context())
	if n != 1 || err != nil {
		t.Fatalf("KillOrphans = %d, %v", n, err)
	}
	l, _ := tr.List(true)
	if len(l) != 1 || l[0].Handle != live.Handle {
		t.Errorf("left: %+v", l)
	}
	if c := tr.Counts(); c.OrphansReaped != 0 {
		t.Errorf("KillOrphans counted towards the daemon's reaped figure: %+v", c)
	}
}

func TestDepth(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{}, 0},
		{map[string]string{EnvDepth: ""}, 0},
		{map[string]string{EnvDepth: "0"}, 0},
		{map[string]string{EnvDepth: "2"}, 2},
		{map[string]string{EnvDepth: " 3 "}, 3},
		{map[string]string{EnvDepth: "yes"}, 1},
		{map[string]string{EnvDepth: "-4"}, 1},
	}
	for _, tt := range tests {
		if got := Depth(tt.env); got != tt.want {
			t.Errorf("Depth(%v) = %d, want %d", tt.env, got, tt.want)
		}
	}
}

func TestTagChain(t *testing.T) {
	first := Tag("", "inst", "sess", "codex-aaaaaa")
	if first != "inst/sess/codex-aaaaaa" {
		t.Errorf("tag %q", first)
	}
	chain := Tag(first, "inst2", "sess2", "claude-bbbbbb")
	if chain != "inst/sess/codex-aaaaaa,inst2/sess2/claude-bbbbbb" {
		t.Errorf("chain %q", chain)
	}
	tests := []struct {
		handle string
		want   bool
	}{{"codex-aaaaaa", true}, {"claude-bbbbbb", true}, {"codex-aaaaa", false}, {"aaaaaa", false}, {"pi-cccccc", false}}
	for _, tt := range tests {
		if got := Tagged(chain, tt.handle); got != tt.want {
			t.Errorf("Tagged(%q) = %v", tt.handle, got)
		}
	}
}
