package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTUINeedsATerminalFirst: without a terminal on stdin the TUI says
// so and exits 1 before anything is started: no daemon (plain `scv` starts
// one when none runs) and no in-process server.
func TestTUINeedsATerminalFirst(t *testing.T) {
	for _, args := range [][]string{{"tui"}, {}, {"--no-daemon"}, {"tui", "--no-daemon"}} {
		t.Run(strings.Join(append([]string{"scv"}, args...), " "), func(t *testing.T) {
			home := t.TempDir()
			var out, errb bytes.Buffer
			code := Run(t.Context(), append(args, "--scv-home", home), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
			if code != ExitFailure {
				t.Errorf("exit %d, want %d", code, ExitFailure)
			}
			if msg := errb.String(); !strings.Contains(msg, "needs a terminal") || !strings.Contains(msg, "scv exec") {
				t.Errorf("stderr %q does not say a terminal is needed and what to use instead", msg)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
			for _, p := range []string{"server.sock", "logs", "state"} {
				if _, err := os.Stat(filepath.Join(home, p)); err == nil {
					t.Errorf("%s exists: something was started for a TUI that cannot run", p)
				}
			}
		})
	}
}

func TestRootRejectsUnknownCommand(t *testing.T) {
	var errb bytes.Buffer
	code := Run(t.Context(), []string{"no-such-command"}, Stdio{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}, Env{"HOME": t.TempDir()})
	if code != ExitUsage || !strings.Contains(errb.String(), "unknown command") {
		t.Errorf("exit %d, stderr %q; want usage error", code, errb.String())
	}
}
