package cli

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestToolsScripts runs the scripts of testdata/script/tools: `scv tools
// list` and `scv tools call` through the real command line (runtime.md §7,
// §11, §12; tools.md read, write, bash).
func TestToolsScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script", "tools"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("SCV_HOME", filepath.Join(env.WorkDir, "scvhome"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "userhome"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": cmdExits},
	})
}

// cmdExits implements `exits CODE PROG [ARGS...]`: run PROG like exec
// (stdout and stderr are kept for the following stdout/stderr/cmp
// commands) and require exit status CODE, which `! exec` cannot check.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("run %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
