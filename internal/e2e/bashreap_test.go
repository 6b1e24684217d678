package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestKilledDaemonBashReapedOnRestart: the daemon is SIGKILLed while an
// approved bash call runs `sleep 1040 & setsid sleep 1041 & sleep 1042`
// (a background child, a setsid escapee and the foreground command, plus
// the shell). They all outlive the daemon; the next daemon started on the
// same home stops every one of them at start-up, from the call's record.
func TestKilledDaemonBashReapedOnRestart(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	pidFile := filepath.Join(in.ws, "pids")
	// Each process writes its own PID (setsid may fork, so $! is not it).
	cmd := fmt.Sprintf(`echo $$ >> %[1]s; sh -c 'echo $$ >> %[1]s; exec sleep 1040' & setsid sh -c 'echo $$ >> %[1]s; exec sleep 1041' & sh -c 'echo $$ >> %[1]s; exec sleep 1042'`, pidFile)
	fm.Script(modeltest.ToolCall("c1", "bash", jsonString(t, map[string]string{"command": cmd})))
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "sleep a while")
	evs := until(t, c, proto.EventApprovalRequested)
	if err := c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: last[*proto.ApprovalRequested](t, evs).ApprovalID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	until(t, c, proto.EventToolStarted)
	pids := waitPIDs(t, pidFile, 4)
	if len(pids) < 4 {
		t.Fatalf("the command's processes did not all start (%v); stderr:\n%s", pids, d.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(in.home, "run", "calls")); len(ents) != 1 {
		t.Errorf("call records while the call runs: %v, want one", ents)
	}

	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !d.wait(5 * time.Second) {
		t.Fatal("the daemon did not die of SIGKILL")
	}
	time.Sleep(300 * time.Millisecond)
	for _, p := range pids {
		if !anyRunning([]int{p}) {
			t.Fatalf("process %d ended with the daemon; the test needs survivors", p)
		}
	}

	d2 := in.startDaemon(in.env)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && anyRunning(pids) {
		time.Sleep(20 * time.Millisecond)
	}
	if anyRunning(pids) {
		var alive []int
		for _, p := range pids {
			if anyRunning([]int{p}) {
				alive = append(alive, p)
			}
		}
		t.Fatalf("processes %v of the killed daemon's bash call survived the restart; stderr:\n%s", alive, d2.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(in.home, "run", "calls")); len(ents) != 0 {
		t.Errorf("call records left after the restart: %v", ents)
	}
}

// waitPIDs reads the PIDs the test's processes write to file until there
// are n (or 10 s pass) and kills them when the test ends, whatever happened.
func waitPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < n && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
	}
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	return pids
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
