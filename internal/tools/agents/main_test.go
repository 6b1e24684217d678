package agents

import (
	"os"
	"testing"

	"github.com/scv-agent/scv/internal/sandbox"
)

// TestMain lets the test binary be the sandbox helper, as SCV's binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeACPCommand {
		os.Exit(fakeACPAgent())
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}
