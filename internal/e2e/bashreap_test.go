package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestKilledDaemonBashReapedOnRestart: the daemon is SIGKILLed while an
// approved bash call runs `sleep 1040 & setsid sleep 1041 & sleep 1042`
// (a background child, a setsid escapee and the foreground command, plus
// the shell). They all outlive the daemon; the next daemon started on the
// same home stops every one of them at start-up: under the subreaper from
// the call's record, under a cgroup leaf from the leaf, with no record
// written at all.
func TestKilledDaemonBashReapedOnRestart(t *testing.T) {
	t.Run("subreaper", func(t *testing.T) { killedDaemonBashReaped(t, "subreaper", 1) })
	t.Run("cgroup", func(t *testing.T) {
		if ownCgroupDir(t) == "" {
			t.Skip("no cgroup v2 here")
		}
		killedDaemonBashReaped(t, "cgroup", 0)
	})
}

func killedDaemonBashReaped(t *testing.T, tracking string, records int) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	in.env = in.withEnv("SCV_PROCESS_TRACKING=" + tracking)
	pidFile := filepath.Join(in.ws, "pids")
	// Each process writes its own PID (setsid may fork, so $! is not it).
	cmd := fmt.Sprintf(`echo $$ >> %[1]s; sh -c 'echo $$ >> %[1]s; exec sleep 1040' & setsid sh -c 'echo $$ >> %[1]s; exec sleep 1041' & sh -c 'echo $$ >> %[1]s; exec sleep 1042'`, pidFile)
	fm.Script(modeltest.ToolCall("c1", "bash", testutil.JSON(map[string]string{"command": cmd})))
	d := in.startDaemon(in.env)
	if tracking == "cgroup" {
		removeLeavesAtCleanup(t, d)
	}
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "sleep a while")
	approveNext(t, c, sid)
	until(t, c, proto.EventToolStarted)
	pids := testutil.WaitPIDs(t, pidFile, 4, 10*time.Second)
	if len(pids) < 4 {
		t.Fatalf("the command's processes did not all start (%v); stderr:\n%s", pids, d.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(in.home, "run", "calls")); len(ents) != records {
		t.Errorf("call records while the call runs under %s: %v, want %d", tracking, ents, records)
	}

	d.killLeavingChildren(t)
	for _, p := range pids {
		if !testutil.AnyRunning(p) {
			t.Fatalf("process %d ended with the daemon; the test needs survivors", p)
		}
	}

	d2 := in.startDaemon(in.env)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && testutil.AnyRunning(pids...) {
		time.Sleep(20 * time.Millisecond)
	}
	if testutil.AnyRunning(pids...) {
		var alive []int
		for _, p := range pids {
			if testutil.AnyRunning(p) {
				alive = append(alive, p)
			}
		}
		t.Fatalf("processes %v of the killed daemon's bash call survived the restart; stderr:\n%s", alive, d2.stderr)
	}
	// The record goes once its processes are gone: the reconcile kills,
	// waits for them, then removes it, so it may still be there for a
	// moment after the last one ended.
	var ents []os.DirEntry
	for {
		ents, _ = os.ReadDir(filepath.Join(in.home, "run", "calls"))
		if len(ents) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(ents) != 0 {
		t.Errorf("call records left after the restart: %v", ents)
	}
	for len(leakedLeaves(t, d.cmd.Process.Pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if l := leakedLeaves(t, d.cmd.Process.Pid); len(l) > 0 {
		t.Errorf("leaves of the killed daemon left after the restart: %v", l)
	}
}
