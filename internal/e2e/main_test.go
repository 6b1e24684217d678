package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/testutil"
)

// scvBin is the scv binary TestMain builds once.
var scvBin string

func TestMain(m *testing.M) {
	// The fake MCP server of some tests is this binary run again.
	mcptest.MaybeServe()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "scv-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if scvBin, err = testutil.BuildSCV(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: goroutines left behind:", err)
			return 1
		}
	}
	return code
}

// instance is one test's SCV home, workspace and child environment.
type instance struct {
	t    *testing.T
	home string
	ws   string
	user string // HOME of the children
	env  []string
}

// newInstance makes a fresh home (mode 0755, so tests can see scv tighten
// it) holding config as config.toml, a workspace with a.txt, and an
// environment with a fake OpenAI key. Nothing is inherited from the test
// process but PATH.
func newInstance(t *testing.T, config string) *instance {
	t.Helper()
	root := t.TempDir()
	in := &instance{t: t, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), user: filepath.Join(root, "user")}
	for _, d := range []string{in.home, in.ws, in.user, filepath.Join(root, "tmp")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(in.home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in.ws, "a.txt"), []byte("hello from a.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + in.user,
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"OPENAI_API_KEY=sk-test",
	}
	return in
}

// providerConfig is a user config pointing the openai profile at url.
func providerConfig(url string, extra ...string) string {
	return fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", url) + strings.Join(extra, "\n") + "\n"
}

// withEnv returns the instance env with kv added (a later KEY= wins) or,
// for a bare "KEY", removed.
func (in *instance) withEnv(kv ...string) []string {
	env := append([]string(nil), in.env...)
	for _, x := range kv {
		key, _, set := strings.Cut(x, "=")
		out := env[:0:0]
		for _, e := range env {
			if !strings.HasPrefix(e, key+"=") {
				out = append(out, e)
			}
		}
		if set {
			out = append(out, x)
		}
		env = out
	}
	return env
}

// result is a finished scv command.
type result struct {
	stdout, stderr string
	code           int
}

// run runs scv --scv-home HOME args... in the workspace with env and stdin,
// bounded to a minute.
func (in *instance) run(env []string, stdin string, args ...string) result {
	in.t.Helper()
	return in.runWithin(time.Minute, env, stdin, args...)
}

// runOK is run of a command that must exit 0 (else the test fails,
// showing its stderr).
func (in *instance) runOK(env []string, stdin string, args ...string) result {
	in.t.Helper()
	r := in.run(env, stdin, args...)
	if r.code != 0 {
		in.t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	return r
}

// runWithin is run bounded to limit (the test fails when it is reached).
func (in *instance) runWithin(limit time.Duration, env []string, stdin string, args ...string) result {
	in.t.Helper()
	return in.runBare(limit, env, stdin, append([]string{"--scv-home", in.home}, args...)...)
}

// bgRun is a scv process running in the background in the workspace, its
// output collected; the test's end kills its process group.
type bgRun struct {
	cmd            *exec.Cmd
	stdout, stderr *testutil.LockedBuffer
	done           chan error
}

// start runs scv --scv-home HOME args... in the background.
func (in *instance) start(args ...string) *bgRun {
	in.t.Helper()
	cmd := exec.Command(scvBin, append([]string{"--scv-home", in.home}, args...)...)
	cmd.Dir, cmd.Env = in.ws, in.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &bgRun{cmd: cmd, stdout: &testutil.LockedBuffer{}, stderr: &testutil.LockedBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	if err := cmd.Start(); err != nil {
		in.t.Fatal(err)
	}
	go func() { r.done <- cmd.Wait() }()
	in.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case err := <-r.done:
			r.done <- err
		case <-time.After(10 * time.Second):
		}
	})
	return r
}

// interrupt sends SIGINT (Ctrl+C) and waits up to 15 s for the process to
// end; it returns the exit status.
func (r *bgRun) interrupt(t *testing.T) int {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
	case <-time.After(15 * time.Second):
		t.Fatalf("scv still running 15 s after SIGINT; stderr:\n%s", r.stderr)
	}
	return r.cmd.ProcessState.ExitCode()
}

// runBare runs scv args... (no --scv-home added) in the workspace.
func (in *instance) runBare(limit time.Duration, env []string, stdin string, args ...string) result {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(in.t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, scvBin, args...)
	cmd.Dir = in.ws
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		in.t.Fatalf("scv %v: %v", args, err)
	}
	if ctx.Err() != nil {
		in.t.Fatalf("scv %.60q did not finish within %v; stderr:\n%s", args, limit, r.stderr)
	}
	return r
}
