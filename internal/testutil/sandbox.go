package testutil

import (
	"testing"

	"github.com/scv-agent/scv/internal/sandbox"
)

// RequireSandbox skips the test when this kernel cannot sandbox (no
// Landlock, or seccomp refused), saying why.
func RequireSandbox(t testing.TB) {
	t.Helper()
	if rep := sandbox.Probe(); !rep.Available {
		t.Skipf("the kernel cannot sandbox: %s", rep.Reason)
	}
}
