package bash

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/testutil"
)

// A command whose background child leaves the group and scrubs its
// environment (`env -i setsid`): with a Containment the child is gone
// when the call returns; without one it survives, tag and group
// notwithstanding.
func TestContainedEscapee(t *testing.T) {
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechCgroup})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	t.Cleanup(c.Close)
	for _, tc := range []struct {
		name    string
		contain *proc.Containment
		survive bool
	}{
		{"contained", c, false},
		{"not contained", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := callEnv(t)
			pidFile := filepath.Join(env.Workspace, "pid")
			cmd := fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' >/dev/null 2>&1 & while [ ! -s %[1]s ]; do sleep 0.01; done`, pidFile)
			res := plan(t, newRegistry(t, Options{Contain: tc.contain}), env, args(cmd)).Run(t.Context())
			if !res.Success {
				t.Fatalf("call failed: %s", res.Output)
			}
			pid := testutil.WaitPID(t, pidFile, 5*time.Second)
			if got := testutil.Running(pid); got != tc.survive {
				t.Errorf("escapee %d running after the call: %v, want %v", pid, got, tc.survive)
			}
		})
	}
}
