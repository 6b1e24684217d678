package bash

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/testutil/containtest"
)

// A command whose background child leaves the group and scrubs its
// environment (`env -i setsid`): with a Containment the child is gone
// when the call returns; without one it survives, tag and group
// notwithstanding.
func TestContainedEscapee(t *testing.T) {
	containtest.EachContainment(t, func(t *testing.T, c *proc.Containment, survive bool) {
		env := callEnv(t)
		pidFile := filepath.Join(env.Workspace, "pid")
		res := plan(t, newRegistry(t, Options{Contain: c}), env, args(testutil.EscapeeScript(pidFile))).Run(t.Context())
		if !res.Success {
			t.Fatalf("call failed: %s", res.Output)
		}
		pid := testutil.WaitPID(t, pidFile, 5*time.Second)
		if got := testutil.Running(pid); got != survive {
			t.Errorf("escapee %d running after the call: %v, want %v", pid, got, survive)
		}
	})
}

// TestNoRecordUnderCgroupLeaf: with calls in cgroup leaves, which the next
// start finds without a record, the recorder is not asked; under the
// group and tag alone (and the subreaper), whose strays nothing else finds
// after a crash, it still is.
func TestNoRecordUnderCgroupLeaf(t *testing.T) {
	for _, tc := range []struct {
		mech proc.Mechanism
		want string
	}{
		{proc.MechCgroup, ""},
		{proc.MechGroupTag, "begin s c, started, done"},
	} {
		t.Run(string(tc.mech), func(t *testing.T) {
			c, err := proc.NewContainment(proc.ContainOptions{Want: tc.mech})
			if err != nil {
				t.Skipf("no %s here: %v", tc.mech, err)
			}
			t.Cleanup(c.Close)
			if got := c.Outlives(); got != (tc.mech == proc.MechCgroup) {
				t.Errorf("Outlives() = %v under %s", got, tc.mech)
			}
			rec := &fakeRecorder{}
			res := plan(t, newRegistry(t, Options{Recorder: rec, Contain: c}), callEnv(t), args("true")).Run(t.Context())
			if !res.Success {
				t.Fatalf("result %+v", res)
			}
			if got := strings.Join(rec.events, ", "); got != tc.want {
				t.Errorf("recorder saw %q under %s, want %q", got, tc.mech, tc.want)
			}
		})
	}
}
