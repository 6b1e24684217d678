package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// fakeCodex writes body as the script of a fake Codex in dir and returns
// the config lines that make agent_codex run it with bash.
func fakeCodex(t *testing.T, dir, body string) []string {
	t.Helper()
	script := filepath.Join(dir, "fake-codex.sh")
	if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"[agents.codex]", `command = "/bin/bash"`, fmt.Sprintf("args = [%q]", script)}
}

// TestDaemonSIGTERMStopsDelegations: a daemon stopped with SIGTERM while a
// delegated agent runs (one that also left a setsid descendant) exits
// within 5 s, and neither the agent nor its descendant survives; `scv
// status` counted the run while it was going.
func TestDaemonSIGTERMStopsDelegations(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("d1", "agent_codex", `{"prompt":"work for a long time"}`))
	root := t.TempDir()
	pidFile := filepath.Join(root, "pids")
	// The fake agent records its own PID and its escapee's, then works.
	// (setsid may fork, so the escapee writes its own PID.)
	body := fmt.Sprintf("echo $$ >> %[1]s; setsid sh -c 'echo $$ >> %[1]s; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300\n", pidFile)
	in := newInstance(t, providerConfig(fm.URL(), fakeCodex(t, root, body)...))
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "delegate")
	evs := until(t, c, proto.EventApprovalRequested)
	ap := last[*proto.ApprovalRequested](t, evs)
	if ap.Risk != "delegate" || !strings.Contains(ap.Summary, "/bin/bash") {
		t.Errorf("approval.requested = %+v", ap)
	}
	approve(t, c, sid, ap.ApprovalID)
	until(t, c, proto.EventToolStarted)

	pids := testutil.WaitPIDs(t, pidFile, 2, 10*time.Second)
	if len(pids) < 2 {
		t.Fatalf("the fake agent did not start (pids %v); stderr:\n%s", pids, d.stderr)
	}
	for _, p := range pids {
		if !testutil.AnyRunning(p) {
			t.Fatalf("process %d of the delegation is not running before SIGTERM", p)
		}
	}
	if st := in.status(t); st.Delegations.Running != 1 {
		t.Errorf("status while delegating: %+v, want 1 running", st.Delegations)
	}

	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !d.wait(6 * time.Second) {
		t.Fatalf("daemon still running 6 s after SIGTERM; stderr:\n%s", d.stderr)
	}
	if !testutil.WaitGone(2500*time.Millisecond, pids...) {
		t.Fatalf("delegated processes %v survived the daemon's SIGTERM", pids)
	}
	if ents, _ := os.ReadDir(filepath.Join(in.home, "run", "delegations")); len(ents) != 0 {
		t.Errorf("delegation records left: %v", ents)
	}
}
