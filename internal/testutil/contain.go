package testutil

import (
	"fmt"
	"testing"

	"github.com/scv-agent/scv/internal/proc"
)

// EscapeeScript is a shell command whose background child leaves the
// process group and scrubs its environment (`env -i setsid`), writes its
// pid to pidFile and sleeps; the command returns once the pid is written.
func EscapeeScript(pidFile string) string {
	return fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 & while [ ! -s %[1]s ]; do sleep 0.01; done`, pidFile)
}

// EachContainment runs f as two subtests: "contained", with a cgroup
// Containment (the test is skipped where there is none), where an escapee
// must not survive the run, and "not contained", with none, where it does.
func EachContainment(t *testing.T, f func(t *testing.T, c *proc.Containment, survive bool)) {
	t.Helper()
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechCgroup})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	t.Cleanup(c.Close)
	t.Run("contained", func(t *testing.T) { f(t, c, false) })
	t.Run("not contained", func(t *testing.T) { f(t, nil, true) })
}
