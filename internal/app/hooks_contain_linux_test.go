package app

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/testutil"
)

// A session's hooks run under the app's Containment, as the bash tool's
// commands do: a hook's child that left the group and scrubbed its
// environment (which the tag sweep cannot find) is gone when the hook
// returns.
func TestHooksUseTheContainment(t *testing.T) {
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechCgroup})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	t.Cleanup(c.Close)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := filepath.Join(t.TempDir(), "hook")
	body := fmt.Sprintf("#!/bin/bash\nenv -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 &\nwhile [ ! -s %[1]s ]; do sleep 0.01; done\n", pidFile)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fmt.Sprintf("[[hooks.run]]\nevent = \"turn_end\"\ncommand = [%q]\n", script))
	f.app.opts.Contain = c
	l, err := f.app.LoadConfig(f.ws, NoOverrides)
	if err != nil {
		t.Fatal(err)
	}
	var ran []hooks.Ran
	f.app.Hooks(&l.Config, f.ws, "s1").Run(t.Context(), hooks.Input{Event: hooks.TurnEnd}, func(r hooks.Ran) { ran = append(ran, r) })
	if len(ran) != 1 || ran[0].Outcome != hooks.OutcomeOK {
		t.Fatalf("runs = %+v, want one ok", ran)
	}
	if pid := testutil.WaitPID(t, pidFile, 5*time.Second); testutil.Running(pid) {
		t.Errorf("the hook's escapee %d outlived the hook", pid)
	}
}
