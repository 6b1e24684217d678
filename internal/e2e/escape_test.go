package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// escapeCommand leaves the process group (setsid) and drops the whole
// environment, the call's tag included (env -i); the escapee writes its
// own PID to file (setsid may fork, so $! is not it), and the command
// waits for that before it ends.
func escapeCommand(file string) string {
	return fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 &
while [ ! -s %[1]s ]; do sleep 0.01; done`, file)
}

// escapeTurn scripts one turn: a bash call and a delegated agent that each
// leave such an escapee and end, a call of an MCP server that left one at
// its start-up, then a bash call reporting which escapees still run (the
// model is sent its output), then the answer.
func escapeTurn(t *testing.T, fm *modeltest.Server, dir string) string {
	t.Helper()
	agent := fakeCodex(t, dir, escapeCommand(filepath.Join(dir, "agent.pid"))+"\necho '{}'\n")
	check := fmt.Sprintf(`for n in bash agent escapee; do p=$(cat %s/$n.pid); s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); case "$s" in ""|Z|X) echo "$n gone";; *) echo "$n running";; esac; done`, dir)
	fm.Script(modeltest.ToolCall("c1", "bash", testutil.JSON(map[string]string{"command": escapeCommand(filepath.Join(dir, "bash.pid"))})))
	fm.Script(modeltest.ToolCall("c2", "agent_codex", `{"prompt":"escape"}`))
	fm.Script(modeltest.ToolCall("c3", "mcp__fake__echo", `{"text":"hi"}`))
	fm.Script(modeltest.ToolCall("c4", "bash", testutil.JSON(map[string]string{"command": check})))
	fm.Script(modeltest.Text("done"))
	exe, env := mcptest.Fake(dir, mcptest.EnvEscape+"=1")
	return providerConfig(fm.URL(), append(agent, "",
		mcpConfig("fake", exe, nil, env, `read_only_tools = ["echo"]`))...)
}

// escapees reads the three escapees' PIDs; the test kills any survivor
// by PID when it ends.
func escapees(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, n := range []string{"bash", "agent", "escapee"} {
		out[n] = testutil.WaitPID(t, filepath.Join(dir, n+".pid"), 10*time.Second)
	}
	return out
}

// checkReport is the output of the checking call, as the model saw it.
func checkReport(t *testing.T, fm *modeltest.Server) string {
	t.Helper()
	for _, r := range fm.Requests() {
		if out, ok := callOutput(r, "c4"); ok {
			var res struct{ Output string }
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("checking call's result %q: %v", out, err)
			}
			return res.Output
		}
	}
	t.Fatal("the model never got the checking call's output")
	return ""
}

// leakedLeaves lists the cgroups SCV process pid left under this test's
// own cgroup (where the child's leaves are made).
func leakedLeaves(t *testing.T, pid int) []string {
	t.Helper()
	dir := ownCgroupDir(t)
	if dir == "" {
		return nil
	}
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		// scv-<instance>-<pid>-<start>-<n>
		if f := strings.Split(e.Name(), "-"); e.IsDir() && len(f) == 5 && f[0] == "scv" && f[2] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// removeLeavesAtCleanup removes the cgroup leaves the daemon d left when
// the test ends: should the test fail with d killed, they go once the
// processes the test started are killed (cleanups run last first).
func removeLeavesAtCleanup(t *testing.T, d *daemonProc) {
	t.Cleanup(func() {
		for _, l := range leakedLeaves(t, d.cmd.Process.Pid) {
			_ = os.Remove(filepath.Join(ownCgroupDir(t), l))
		}
	})
}

// ownCgroupDir is the cgroup v2 directory of this process ("" without
// one).
func ownCgroupDir(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile("/proc/self/cgroup")
	rel := ""
	for line := range strings.Lines(string(b)) {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			rel = r
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil || rel == "" {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		if fs := strings.Fields(pre); strings.HasPrefix(post, "cgroup2 ") && len(fs) >= 5 {
			return filepath.Join(fs[4], strings.TrimPrefix(rel, fs[3]))
		}
	}
	return ""
}

// trackingCases are the mechanisms SCV_PROCESS_TRACKING forces, and
// whether an escapee outlives its call under each: group+tag is the old
// behaviour, kept here to show the escape is real.
var trackingCases = []struct {
	mech    string
	survive bool
}{
	{"cgroup", false},
	{"subreaper", false},
	{"group+tag", true},
}

func killAll(pids map[string]int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func wantReport(survive bool) string {
	if survive {
		return "bash running\nagent running\nescapee running\n"
	}
	// The MCP server still runs, so its escapee does too, until it stops.
	return "bash gone\nagent gone\nescapee running\n"
}

// escapeInstance is the instance whose one turn is escapeTurn's, run
// under the tracking mechanism mech (a cgroup case is skipped without
// cgroup v2), with its fake model and the directory of the PID files.
func escapeInstance(t *testing.T, mech string) (in *instance, fm *modeltest.Server, dir string) {
	t.Helper()
	if mech == "cgroup" && ownCgroupDir(t) == "" {
		t.Skip("no cgroup v2 here")
	}
	fm = modeltest.New(t)
	dir = t.TempDir()
	in = newInstance(t, escapeTurn(t, fm, dir))
	in.env = in.withEnv("SCV_PROCESS_TRACKING=" + mech)
	return in, fm, dir
}

// checkEnded checks what who (scv exec or the daemon, process pid) left
// when it ended after the escape turn: the MCP server's escapee runs on
// only where the mechanism lets it survive, and no cgroup leaf of pid is
// left.
func checkEnded(t *testing.T, who string, pid, escapee int, survive bool) {
	t.Helper()
	testutil.WaitGone(3*time.Second, escapee)
	if testutil.Running(escapee) != survive {
		t.Errorf("the MCP server's escapee running after %s ended: %v, want %v", who, !survive, survive)
	}
	if l := leakedLeaves(t, pid); len(l) > 0 {
		t.Errorf("cgroups left by %s: %v", who, l)
	}
}

// TestExecNoEscapee: under `scv exec`, the exact `env -i setsid` escape
// from a bash call, a delegated agent and an MCP server: the first two are
// gone when their calls end, the third when exec ends, and no cgroup of
// exec is left; with the group and tag alone all three survive.
func TestExecNoEscapee(t *testing.T) {
	for _, tc := range trackingCases {
		t.Run(tc.mech, func(t *testing.T) {
			in, fm, dir := escapeInstance(t, tc.mech)
			r := in.start("exec", "--yes", "--verbose", "escape")
			var code int
			select {
			case <-r.done:
				code = r.cmd.ProcessState.ExitCode()
			case <-time.After(60 * time.Second):
				t.Fatalf("scv exec did not end within 60 s; stderr:\n%s", r.stderr)
			}
			pids := escapees(t, dir)
			defer killAll(pids)
			if code != 0 || r.stdout.String() != "done\n" {
				t.Fatalf("exit %d stdout %q; stderr:\n%s", code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr.String(), "scv: process tracking: "+tc.mech) {
				t.Errorf("--verbose does not name the mechanism %s:\n%s", tc.mech, r.stderr)
			}
			if got := checkReport(t, fm); got != wantReport(tc.survive) {
				t.Errorf("escapees while exec ran:\n%s\nwant\n%s", got, wantReport(tc.survive))
			}
			checkEnded(t, "scv exec", r.cmd.Process.Pid, pids["escapee"], tc.survive)
		})
	}
}

// TestDaemonNoEscapee: the same through the daemon, which says in `scv
// status` which mechanism it uses; the MCP server's escapee goes when the
// daemon stops it at its own stop.
func TestDaemonNoEscapee(t *testing.T) {
	for _, tc := range trackingCases {
		t.Run(tc.mech, func(t *testing.T) {
			in, fm, dir := escapeInstance(t, tc.mech)
			d := in.startDaemon(in.env)
			if st := in.status(t); !strings.HasPrefix(st.ProcessTracking, tc.mech) {
				t.Errorf("status process_tracking %q, want %s", st.ProcessTracking, tc.mech)
			}
			if r := in.run(in.env, "", "status"); !strings.Contains(r.stdout, "  processes:   "+tc.mech) {
				t.Errorf("scv status does not name the mechanism:\n%s", r.stdout)
			}
			c := in.connect()
			sid := in.startSession(c, proto.SessionStart{}).SessionID
			sendTurn(t, c, sid, "escape")
			for {
				ev := next(t, c)
				if ap, ok := ev.(*proto.ApprovalRequested); ok {
					approve(t, c, sid, ap.ApprovalID)
				}
				if ev.EventType() == proto.EventTurnCompleted {
					break
				}
			}
			pids := escapees(t, dir)
			defer killAll(pids)
			if got := checkReport(t, fm); got != wantReport(tc.survive) {
				t.Errorf("escapees while the daemon ran:\n%s\nwant\n%s\ndaemon stderr:\n%s", got, wantReport(tc.survive), d.stderr)
			}
			c.Close()
			if r := in.run(in.env, "", "stop"); r.code != 0 {
				t.Fatalf("scv stop: exit %d, %s", r.code, r.stderr)
			}
			if !d.wait(10 * time.Second) {
				t.Fatalf("daemon still running after scv stop; stderr:\n%s", d.stderr)
			}
			checkEnded(t, "the daemon", d.cmd.Process.Pid, pids["escapee"], tc.survive)
		})
	}
}

// TestKilledDaemonLeafReapedOnRestart: a daemon SIGKILLed while a bash
// call runs leaves the call's processes in its cgroup leaf, among them an
// escapee that cleared its environment (no record or tag can find it);
// the next daemon on the same home stops it at start-up from the leaf and
// removes the leaf.
//
// Every process that serves sessions reaps them at its start, not only the
// daemon: the next start here is a daemon, or `scv acp` (which serves its
// stdin, here empty, in process). `scv agents kill --orphans`, run by hand
// with no SCV serving, does the same.
func TestKilledDaemonLeafReapedOnRestart(t *testing.T) {
	if ownCgroupDir(t) == "" {
		t.Skip("no cgroup v2 here")
	}
	for _, next := range []string{"daemon", "acp", "kill-orphans"} {
		t.Run(next, func(t *testing.T) { killedDaemonLeafReaped(t, next) })
	}
}

func killedDaemonLeafReaped(t *testing.T, next string) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	in.env = in.withEnv("SCV_PROCESS_TRACKING=cgroup")
	pidFile := filepath.Join(in.ws, "escapee.pid")
	fm.Script(modeltest.ToolCall("c1", "bash", testutil.JSON(map[string]string{"command": escapeCommand(pidFile) + "; sleep 600"})))
	d := in.startDaemon(in.env)
	removeLeavesAtCleanup(t, d)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "escape and wait")
	approveNext(t, c, sid)
	escapee := testutil.WaitPID(t, pidFile, 10*time.Second)
	d.killLeavingChildren(t)
	if !testutil.Running(escapee) {
		t.Fatalf("escapee %d ended with the daemon; the test needs a survivor", escapee)
	}
	if len(leakedLeaves(t, d.cmd.Process.Pid)) == 0 {
		t.Fatal("the killed daemon left no cgroup leaf; the test needs one")
	}
	var stderr func() string
	switch next {
	case "daemon":
		stderr = in.startDaemon(in.env).stderr.String
	case "acp":
		r := in.run(in.env, "", "acp")
		if r.code != 0 {
			t.Fatalf("scv acp with no input: exit %d, stderr:\n%s", r.code, r.stderr)
		}
		stderr = func() string { return r.stderr }
	default:
		r := in.run(in.env, "", "agents", "kill", "--orphans")
		if r.code != 0 || !strings.Contains(r.stderr, "stopped the processes left in the cgroups of SCV processes that died") {
			t.Errorf("scv agents kill --orphans: exit %d, stderr:\n%s", r.code, r.stderr)
		}
		stderr = func() string { return r.stderr }
	}
	if !testutil.WaitGone(10*time.Second, escapee) {
		t.Fatalf("escapee %d of the killed daemon survived the start of %s; stderr:\n%s", escapee, next, stderr())
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(leakedLeaves(t, d.cmd.Process.Pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if l := leakedLeaves(t, d.cmd.Process.Pid); len(l) > 0 {
		t.Errorf("leaves of the killed daemon left after the restart: %v", l)
	}
}

// A process tracking SCV_PROCESS_TRACKING does not know is refused before
// anything runs, with the choices named.
func TestProcessTrackingRefused(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	r := in.run(in.withEnv("SCV_PROCESS_TRACKING=jail"), "", "tools", "list")
	want := "SCV_PROCESS_TRACKING: unknown process tracking \"jail\": use auto, cgroup, subreaper or group+tag"
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d stderr %q, want 2 and %q", r.code, r.stderr, want)
	}
}
