package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestUndoAsksOnATerminal runs `scv undo` in a tmux pane (a real
// terminal): it shows the change and asks; "n" changes nothing (exit 1),
// "y" restores (exit 0).
func TestUndoAsksOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"changed\n","mode":"replace"}`))
	fm.Script(modeltest.Text("done"))
	if r := in.run(in.env, "", "exec", "--yes", "edit"); r.code != 0 {
		t.Fatalf("exec: exit %d: %s", r.code, r.stderr)
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	cmd := "env -i"
	for _, e := range in.env {
		cmd += " " + q(e)
	}
	cmd += " " + q(scvBin) + " --scv-home " + q(in.home) + " undo"
	script := "cd " + q(in.ws) + " && " + cmd + "; echo first-exit=$?; " + cmd + "; echo second-exit=$?; sleep 60"
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		c := exec.Command("tmux", append([]string{"-S", sock}, args...)...)
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "HOME=" + in.user}
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, errb.String())
		}
		return out.String()
	}
	tmux("new-session", "-d", "-s", "undo", "-x", "120", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	// waitFor polls the pane until it shows want n times.
	waitFor := func(want string, n ...int) string {
		t.Helper()
		times := 1
		if len(n) > 0 {
			times = n[0]
		}
		deadline := time.Now().Add(30 * time.Second)
		var s string
		for time.Now().Before(deadline) {
			if s = tmux("capture-pane", "-p", "-t", "undo"); strings.Count(s, want) >= times {
				return s
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the pane never showed %q:\n%s", want, s)
		return ""
	}
	s := waitFor("[y/N]")
	if !strings.Contains(s, "+hello from a.txt") || !strings.Contains(s, "not tracked") {
		t.Errorf("the question came without the change:\n%s", s)
	}
	tmux("send-keys", "-t", "undo", "n", "Enter")
	waitFor("first-exit=1")
	if b, _ := os.ReadFile(filepath.Join(in.ws, "a.txt")); string(b) != "changed\n" {
		t.Fatalf("a.txt after answering n = %q", b)
	}
	waitFor("[y/N]", 2)
	tmux("send-keys", "-t", "undo", "y", "Enter")
	s = waitFor("second-exit=0")
	if !strings.Contains(s, "restored a.txt") {
		t.Errorf("the undo did not say what it restored:\n%s", s)
	}
	if b, _ := os.ReadFile(filepath.Join(in.ws, "a.txt")); string(b) != "hello from a.txt\n" {
		t.Errorf("a.txt after answering y = %q", b)
	}
}
