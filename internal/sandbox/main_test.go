package sandbox

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary be the sandbox helper (`sandbox-exec`, as
// SCV's binary is) and the confined program of the syscall tests
// (`probe`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case HelperCommand:
			os.Exit(Main(os.Args[2:], os.Stderr))
		case "probe":
			os.Exit(probeMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func probeMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "probe NAME")
		return 2
	}
	f, ok := probes[args[0]]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown probe", args[0])
		return 2
	}
	if err := f(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok")
	return 0
}
