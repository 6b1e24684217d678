package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestTUIWithoutDaemon(t *testing.T) {
	for _, args := range [][]string{{"tui"}, {}} {
		t.Run(strings.Join(append([]string{"scv"}, args...), " "), func(t *testing.T) {
			home := t.TempDir()
			var out, errb bytes.Buffer
			code := Run(t.Context(), append(args, "--scv-home", home), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
			if code != ExitFailure {
				t.Errorf("exit %d, want %d", code, ExitFailure)
			}
			msg := errb.String()
			for _, want := range []string{filepath.Join(home, "server.sock"), "scv run", "scv start"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q lacks %q", msg, want)
				}
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
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
