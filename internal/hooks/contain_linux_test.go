package hooks

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/testutil/containtest"
)

// A hook whose background child leaves the group and scrubs its
// environment (`env -i setsid`): with the runner's Containment the child
// is gone when the run returns; without one (the group and tag sweep
// alone) it survives.
func TestContainedEscapee(t *testing.T) {
	containtest.EachContainment(t, func(t *testing.T, c *proc.Containment, survive bool) {
		ws := t.TempDir()
		pidFile := filepath.Join(ws, "pid")
		hook := testutil.Script(t, ws, "escape", testutil.EscapeeScript(pidFile))
		r := New(Options{Hooks: []Hook{{Name: "escape", Event: TurnEnd, Command: []string{hook}}},
			Env: []string{"PATH=/usr/bin:/bin"}, Workspace: ws, SessionID: "s1", Contain: c})
		var rs []Ran
		r.Run(t.Context(), Input{Event: TurnEnd}, collect(&rs))
		if len(rs) != 1 || rs[0].Outcome != OutcomeOK {
			t.Fatalf("runs = %+v, want one ok", rs)
		}
		pid := testutil.WaitPID(t, pidFile, 5*time.Second)
		if got := testutil.Running(pid); got != survive {
			t.Errorf("escapee %d running after the hook: %v, want %v", pid, got, survive)
		}
	})
}

// A contained hook past its time limit is killed with everything it
// started, its scrubbed setsid child included, and the run says why.
func TestContainedTimeout(t *testing.T) {
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechCgroup})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	t.Cleanup(c.Close)
	ws := t.TempDir()
	pidFile := filepath.Join(ws, "pid")
	hook := testutil.Script(t, ws, "slow", testutil.EscapeeScript(pidFile)+`
echo "thinking" >&2; sleep 600`)
	r := New(Options{Hooks: []Hook{{Name: "slow", Event: PreTool, Command: []string{hook}, Timeout: 2 * time.Second}},
		Env: []string{"PATH=/usr/bin:/bin"}, Workspace: ws, SessionID: "s1", Contain: c})
	var rs []Ran
	d := r.Run(t.Context(), preTool("bash"), collect(&rs))
	if !d.Deny || !strings.Contains(d.Reason, "timed out after 2s") || len(rs) != 1 || rs[0].Stderr != "thinking" {
		t.Errorf("decision %+v, runs %+v", d, rs)
	}
	if pid := testutil.WaitPID(t, pidFile, 5*time.Second); testutil.Running(pid) {
		t.Errorf("the timed-out hook's escapee %d still runs", pid)
	}
}
