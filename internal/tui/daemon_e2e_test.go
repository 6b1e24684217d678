package tui_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// startDaemon runs `scv run --scv-home home` and waits for its socket.
func startDaemon(t testing.TB, scv, home string) {
	t.Helper()
	cmd := scvCommand(t, scv, home, "run")
	logs := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(6 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the daemon did not exit within 6 s of SIGTERM; log:\n%s", logs)
		}
	})
	sock := filepath.Join(home, "server.sock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		c, err := client.Dial(ctx, sock)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("scv run exited early; log:\n%s", logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no daemon socket after 10 s: %v; log:\n%s", err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// e2eSetup skips unless the scv binary (with `scv run`) and tmux are at
// hand, and gives the binary with a fresh home and workspace.
func e2eSetup(t *testing.T) (scv, home, ws string) {
	t.Helper()
	scv = scvBinary(t)
	requireRun(t, scv)
	return scv, t.TempDir(), t.TempDir()
}

// startSCV runs `scv --scv-home home` and then flags in ws, in a w×h pane.
func startSCV(t *testing.T, w, h int, scv, home, ws string, flags ...string) *pane {
	t.Helper()
	script := "cd " + shellQuote(ws) + " && " + shellQuote(scv) + " --scv-home " + shellQuote(home)
	for _, f := range flags {
		script += " " + f
	}
	return startPane(t, w, h, script)
}

// openTUI points home's configuration at the fake model and attaches the
// TUI (see attachTUI).
func openTUI(t *testing.T, scv, home, ws string, fake *modeltest.Server, w, h int) *pane {
	t.Helper()
	writeConfig(t, home, fake.URL())
	return attachTUI(t, scv, home, ws, w, h)
}

// attachTUI starts home's daemon and opens the TUI in ws in a w×h pane,
// once it shows it is ready.
func attachTUI(t *testing.T, scv, home, ws string, w, h int) *pane {
	t.Helper()
	startDaemon(t, scv, home)
	p := startSCV(t, w, h, scv, home, ws)
	p.waitFor("fake-model", "connected", "ready")
	return p
}

// scvCommand is `scv args… --scv-home home`, run outside the pane with a
// HOME of its own.
func scvCommand(t testing.TB, scv, home string, args ...string) *exec.Cmd {
	cmd := exec.Command(scv, append(args, "--scv-home", home)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	return cmd
}

// stopDaemon runs `scv stop` for home.
func stopDaemon(t *testing.T, scv, home string) {
	t.Helper()
	if out, err := scvCommand(t, scv, home, "stop").CombinedOutput(); err != nil {
		t.Fatalf("scv stop: %v: %s", err, out)
	}
}

// TestEndToEndWithDaemon runs the real binary twice: `scv run` as the
// daemon with a provider pointing at the scripted fake model server, and
// `scv` in a tmux pane. A prompt leads to a bash call that is approved
// with y; its output and the final answer appear; Ctrl+C quits and leaves
// the terminal as it was.
func TestEndToEndWithDaemon(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("I will run it."), modeltest.ToolCall("call_1", "bash", `{"command":`, `"echo e2e-bash-output"}`), modeltest.Usage(500, 20))
	fake.Script(modeltest.Text("The command printed ", "e2e-bash-output. All done."), modeltest.Usage(600, 12))
	fake.Script(modeltest.ToolCall("call_2", "bash", `{"command":"sleep 30"}`))
	fake.Script(modeltest.Text("Queued prompt answered."))
	p := openTUI(t, scv, home, ws, fake, 100, 32)
	p.submit("please echo something")
	p.answerApproval("y", "bash", "risk:")
	s := p.waitFor("⎿ e2e-bash-output", "All done.", "[done]", "ready")
	if !strings.Contains(s, "› please echo something") {
		t.Errorf("prompt not in the transcript:\n%s", s)
	}

	// A long call, a prompt queued behind it, Esc cancels the turn, and
	// the queued prompt runs next.
	p.submit("sleep please")
	p.answerApproval("y", "sleep 30")
	p.waitFor("bash sleep 30 [running]")
	p.submit("after the sleep")
	p.waitFor("queued: after the sleep")
	p.keys("Escape")
	s = p.waitFor("bash sleep 30 [cancelled]", "turn cancelled", "› after the sleep", "Queued prompt answered.", "ready")
	if strings.Contains(s, "queued:") {
		t.Errorf("a started prompt is still shown as queued:\n%s", s)
	}
	p.quit()
	if n := fake.Pending(); n != 0 {
		t.Errorf("%d scripted model responses unused", n)
	}
}

// requireRun skips until the binary has a `run` subcommand: without one
// cobra answers `scv run --help` with the root's help, whose usage line is
// not "scv run".
func requireRun(t testing.TB, scv string) {
	t.Helper()
	if out, err := exec.Command(scv, "run", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "scv run") {
		t.Skipf("waits for `scv run` (internal/daemon serving sessions through internal/server, wired by internal/app and internal/cli); `scv run --help` gave: %v %.200s", err, out)
	}
}

// writeConfig makes the fake model server the active provider.
func writeConfig(t testing.TB, home, baseURL string) {
	t.Helper()
	config := `[provider]
active = "fake"

[providers.fake]
base_url = "` + baseURL + `"
model = "fake-model"
wire_api = "responses"
api_key_env = ""
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// appendConfig adds text to the end of home's configuration.
func appendConfig(t testing.TB, home, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
