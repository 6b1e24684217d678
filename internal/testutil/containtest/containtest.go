// Package containtest runs a test with and without a cgroup containment.
// It is apart from internal/testutil because it imports internal/proc,
// whose own tests import testutil.
package containtest

import (
	"testing"

	"github.com/scv-agent/scv/internal/proc"
)

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
