package proc

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
)

// escapeScript leaves the process group (setsid) and drops every
// environment variable, the call's tag included (env -i), then waits for
// the escapee to write its own PID (setsid may fork, so $! is not it).
func escapeScript(pidFile string) string {
	return fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' >/dev/null 2>&1 &
while [ ! -s %[1]s ]; do sleep 0.01; done`, pidFile)
}

// testCgroup makes a cgroup for the test under this process's own and
// returns a Containment making its leaves there; it skips the test where
// no cgroup v2 is writable. When the test ends the cgroup must hold no
// leaf any more.
func testCgroup(t *testing.T) (*Containment, string) {
	t.Helper()
	own, _, err := ownCgroup()
	if err != nil {
		t.Skipf("no cgroup v2: %v", err)
	}
	dir := filepath.Join(own, "scvtest-"+rand.Text()[:12])
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup v2 not writable here: %v", err)
	}
	t.Cleanup(func() {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.IsDir() {
				t.Errorf("leaked cgroup %s", filepath.Join(dir, e.Name()))
			}
		}
		if err := removeCgroupTree(dir); err != nil {
			t.Errorf("remove the test cgroup: %v", err)
		}
	})
	c, err := NewContainment(ContainOptions{Want: MechCgroup, CgroupDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close) // before the check above: it removes the ready leaves
	if c.Mechanism() != MechCgroup {
		t.Fatalf("mechanism %s, want cgroup", c.Describe())
	}
	return c, dir
}

// The exact escape (setsid + env -i) from a Run: with a cgroup leaf the
// escapee is gone when Run returns and the leaf is removed; without any
// containment it survives (which is what makes this test able to fail).
func TestContainCgroupRunEscapee(t *testing.T) {
	c, _ := testCgroup(t)
	for _, tc := range []struct {
		name    string
		contain *Containment
		survive bool
	}{
		{"cgroup", c, false},
		{"no containment", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			res, out := runBash(t, t.Context(), escapeScript(pidFile), func(s *Spec) {
				s.Contain = tc.contain
				s.Tag = "SCV_PROC_TEST_TAG=" + rand.Text()
			})
			if res.ExitCode == nil || *res.ExitCode != 0 {
				t.Fatalf("run: %+v %s", res, out)
			}
			pid := testutil.WaitPID(t, pidFile, 5*time.Second)
			if got := testutil.Running(pid); got != tc.survive {
				t.Errorf("escapee %d running after Run: %v, want %v", pid, got, tc.survive)
			}
		})
	}
}

// The same escape from a long-lived child (an MCP server's shape): gone
// once the child's Done closes.
func TestContainCgroupChildEscapee(t *testing.T) {
	c, _ := testCgroup(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	ch := startChild(t, escapeScript(pidFile)+"\nread line", func(s *Spec) { s.Contain = c })
	pid := testutil.WaitPID(t, pidFile, 5*time.Second)
	ch.Stdin.Close()
	waitDone(t, ch, 10*time.Second)
	if testutil.Running(pid) {
		t.Errorf("escapee %d of a child survived its end", pid)
	}
}

// Cancellation and the deadline stop the whole leaf too, an escapee
// ignoring TERM included; on a kernel without cgroup.kill each process is
// signalled instead (forced here).
func TestContainCgroupCancelDeadlineNoKillFile(t *testing.T) {
	c, _ := testCgroup(t)
	noKill := &Containment{mech: MechCgroup, plat: c.plat, log: c.log}
	noKill.plat.hasKill = false
	script := func(pidFile string) string {
		return fmt.Sprintf(`env -i setsid sh -c 'trap "" TERM; echo $$ > %[1]s; while :; do sleep 0.05; done' >/dev/null 2>&1 &
while [ ! -s %[1]s ]; do sleep 0.01; done; sleep 600`, pidFile)
	}
	for _, tc := range []struct {
		name    string
		contain *Containment
		timeout time.Duration
	}{
		{"cancel", c, 0},
		{"deadline", c, 2 * time.Second},
		{"cancel without cgroup.kill", noKill, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := startBash(t, ctx, script(pidFile), func(s *Spec) {
				s.Contain, s.Timeout, s.Grace = tc.contain, tc.timeout, 300*time.Millisecond
			})
			pid := testutil.WaitPID(t, pidFile, 10*time.Second)
			if tc.timeout == 0 {
				cancel()
			}
			r := await(t, done, 15*time.Second)
			if !r.res.Cancelled && !r.res.TimedOut {
				t.Errorf("result %+v, want cancelled or timed out", r.res)
			}
			if testutil.Running(pid) {
				t.Errorf("TERM-ignoring escapee %d survived", pid)
			}
		})
	}
}

// Reconcile stops and removes the leaves of an SCV process of the same
// instance that died with children running, and leaves its own and those
// of another instance alone.
func TestContainCgroupReconcile(t *testing.T) {
	c, dir := testCgroup(t)
	dead := exec.Command("/bin/true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	deadStart, err := StartTime(deadPID)
	if err != nil {
		t.Fatal(err)
	}
	_ = dead.Wait()
	orphanDir := filepath.Join(dir, fmt.Sprintf("%s%d-%d-7", c.plat.inst, deadPID, deadStart))
	mineDir := filepath.Join(dir, c.plat.prefix+"99")
	otherDir := filepath.Join(dir, fmt.Sprintf("scv-%s-%d-%d-7", instanceID("another home"), deadPID, deadStart))
	for _, d := range []string{orphanDir, mineDir, otherDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleeper := exec.Command("/bin/sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.KillAtCleanup(t, sleeper.Process.Pid)
	if err := os.WriteFile(filepath.Join(orphanDir, "cgroup.procs"), []byte(fmt.Sprint(sleeper.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	n, err := c.Reconcile()
	if err != nil || n != 1 {
		t.Fatalf("Reconcile = %d, %v; want 1 leaf", n, err)
	}
	_ = sleeper.Wait()
	if _, err := os.Stat(orphanDir); !os.IsNotExist(err) {
		t.Errorf("the dead owner's leaf is still there (%v)", err)
	}
	if _, err := os.Stat(mineDir); err != nil {
		t.Errorf("Reconcile removed a leaf of a live owner: %v", err)
	}
	if _, err := os.Stat(otherDir); err != nil {
		t.Errorf("Reconcile removed a dead owner's leaf of another instance: %v", err)
	}
	for _, d := range []string{mineDir, otherDir} {
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
}

// helperContainEnv runs the test binary as a child subreaper that uses the
// subreaper mechanism (it is process-wide, so not in the test process).
const helperContainEnv = "SCV_PROC_TEST_CONTAIN"

// containReport is what the contain helper prints: for each escapee its
// PID and whether it was running at each check.
type containReport struct {
	Mechanism string
	PIDs      map[string]int
	Running   map[string]bool
	Err       string
}

func containHelper(mode, dir string) int {
	rep := containReport{PIDs: map[string]int{}, Running: map[string]bool{}}
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(rep) }()
	var c *Containment
	if mode == "subreaper" {
		var err error
		if c, err = NewContainment(ContainOptions{Want: MechSubreaper}); err != nil {
			rep.Err = err.Error()
			return 0
		}
		defer c.Close()
	} else if err := BecomeSubreaper(); err != nil {
		rep.Err = err.Error()
		return 0
	}
	rep.Mechanism = string(c.Mechanism())
	ctx := context.Background()
	env := []string{"PATH=/usr/bin:/bin"}
	file := func(name string) string { return filepath.Join(dir, name) }
	readPID := func(name string) int {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if b, err := os.ReadFile(file(name)); err == nil {
				var pid int
				if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err == nil {
					return pid
				}
			}
		}
		return 0
	}
	note := func(check, name string) {
		rep.Running[check] = rep.PIDs[name] > 0 && Alive(rep.PIDs[name], startOf(rep.PIDs[name]))
	}

	// 1. The exact escape from a Run.
	if _, err := Run(ctx, Spec{Path: bash, Args: []string{"-c", escapeScript(file("run"))}, Env: env, Contain: c}); err != nil {
		rep.Err = err.Error()
		return 0
	}
	rep.PIDs["run"] = readPID("run")
	note("run after its call", "run")

	// 2. The same from a long-lived child, after its end.
	ch, err := Start(Spec{Path: bash, Args: []string{"-c", escapeScript(file("child")) + "\nread line"}, Env: env, Contain: c, Grace: 300 * time.Millisecond})
	if err != nil {
		rep.Err = err.Error()
		return 0
	}
	rep.PIDs["child"] = readPID("child")
	note("child while it runs", "child")
	ch.Stdin.Close()
	<-ch.Done()
	note("child after its end", "child")

	// 3. Two calls at once: A's orphan keeps A's tag and is A's until A
	// ends, even when B (whose scrubbed escapee goes with it) ends first.
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		script := fmt.Sprintf(`( setsid sh -c 'echo $$ > %s; exec sleep 600' >/dev/null 2>&1 & ); while [ ! -e %s ]; do sleep 0.01; done`, file("a"), file("a-may-end"))
		_, _ = Run(ctx, Spec{Path: bash, Args: []string{"-c", script}, Env: env, Contain: c, Tag: "SCV_PROC_TEST_A=" + rand.Text()})
	}()
	rep.PIDs["a"] = readPID("a")
	_, _ = Run(ctx, Spec{Path: bash, Args: []string{"-c", escapeScript(file("b"))}, Env: env, Contain: c})
	rep.PIDs["b"] = readPID("b")
	note("b after its call", "b")
	note("a after b's call", "a")
	_ = os.WriteFile(file("a-may-end"), nil, 0o600)
	<-aDone
	note("a after its call", "a")
	return 0
}

func startOf(pid int) uint64 {
	s, _ := StartTime(pid)
	return s
}

// The subreaper mechanism (the fallback where no cgroup can be made):
// the exact escape from a Run and from a long-lived child is stopped at
// their end, a concurrent call's orphan is left to its own call, and
// without the mechanism the same escapees survive.
func TestContainSubreaper(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want map[string]bool
	}{
		{"subreaper", map[string]bool{
			"run after its call": false, "child while it runs": true, "child after its end": false,
			"b after its call": false, "a after b's call": true, "a after its call": false,
		}},
		{"none", map[string]bool{
			"run after its call": true, "child while it runs": true, "child after its end": true,
			// A's orphan kept its tag, so the tag sweep still finds it.
			"b after its call": true, "a after b's call": true, "a after its call": false,
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperContainEnv+"="+tc.mode+":"+dir)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			var rep containReport
			if jerr := json.Unmarshal(out, &rep); jerr != nil {
				t.Fatalf("helper: %v; output %q: %v", err, out, jerr)
			}
			for _, pid := range rep.PIDs {
				if pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL) // the helper's survivors, by PID
				}
			}
			if rep.Err != "" {
				t.Fatalf("helper: %s", rep.Err)
			}
			if tc.mode == "subreaper" && rep.Mechanism != string(MechSubreaper) {
				t.Errorf("mechanism %q", rep.Mechanism)
			}
			for check, want := range tc.want {
				if got, ok := rep.Running[check]; !ok || got != want {
					t.Errorf("%s: running %v (checked %v), want %v; pids %v", check, got, ok, want, rep.PIDs)
				}
			}
		})
	}
}

func TestParseMechanism(t *testing.T) {
	for in, want := range map[string]Mechanism{"": MechAuto, "auto": MechAuto, " cgroup ": MechCgroup, "subreaper": MechSubreaper, "group+tag": MechGroupTag} {
		if got, err := ParseMechanism(in); err != nil || got != want {
			t.Errorf("ParseMechanism(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMechanism("jail"); err == nil || !strings.Contains(err.Error(), "auto, cgroup, subreaper or group+tag") {
		t.Errorf("ParseMechanism(jail) error %v, want one naming the choices", err)
	}
}
