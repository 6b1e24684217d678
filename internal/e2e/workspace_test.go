package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDeletedWorkingDirectory: scv run from a directory that was deleted
// (the TUI start, exec) says so in one line and exits 2, instead of
// failing somewhere later.
func TestDeletedWorkingDirectory(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	for _, args := range [][]string{{}, {"exec", "hi"}} {
		t.Run("scv "+strings.Join(args, " "), func(t *testing.T) {
			gone := filepath.Join(t.TempDir(), "gone")
			if err := os.Mkdir(gone, 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			// The shell enters the directory, removes it, then runs scv
			// there.
			script := `cd "$1" && rmdir "$1" && shift && exec "$@"`
			cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, "sh", gone, scvBin, "--scv-home", in.home}, args...)...)
			cmd.Env = in.env
			out, err := cmd.CombinedOutput()
			code := cmd.ProcessState.ExitCode()
			if err != nil && code < 0 {
				t.Fatal(err)
			}
			want := "the current directory cannot be used as the workspace"
			if code != 2 || !strings.Contains(string(out), want) || strings.Count(string(out), "\n") != 1 {
				t.Errorf("exit %d output %q, want 2 and one line saying %q", code, out, want)
			}
		})
	}
}
