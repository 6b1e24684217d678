package mcp

import (
	"encoding/json"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

func TestMain(m *testing.M) {
	// The test binary is also the sandbox helper, as SCV's binary is.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	mcptest.MaybeServe()
	goleak.VerifyTestMain(m)
}

// newManager is a Manager with short timings, closed when the test ends.
func newManager(t *testing.T, mod func(*Options)) (*Manager, *testutil.LockedBuffer) {
	t.Helper()
	logs := &testutil.LockedBuffer{}
	opts := Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		InstanceID: "test-" + strconv.Itoa(os.Getpid()), Version: "test", Grace: 500 * time.Millisecond,
		Backoff: 200 * time.Millisecond, MaxBackoff: time.Second, IdleTimeout: time.Minute}
	if mod != nil {
		mod(&opts)
	}
	m := NewManager(opts)
	t.Cleanup(m.Close)
	return m, logs
}

// fake is the fake server of mcptest, leaving its markers in the returned
// directory (also its working directory).
func fake(t *testing.T, extra ...string) (Server, string) {
	t.Helper()
	dir := t.TempDir()
	cmd, env := mcptest.Fake(dir, extra...)
	return Server{Name: "fake", Command: cmd, Env: env, Dir: dir, StartupTimeout: 20 * time.Second, ToolTimeout: 10 * time.Second, Risk: tool.Process}, dir
}

// lease is m's lease of srv for a workspace of its own, released when the
// test ends.
func lease(t *testing.T, m *Manager, srv Server) *Lease {
	t.Helper()
	l := m.Acquire(t.TempDir(), []Server{srv})
	t.Cleanup(l.Release)
	return l
}

// registry is the lease's tools, as a registry.
func registry(t *testing.T, l *Lease) *tool.Registry {
	t.Helper()
	tools, _ := l.Tools(t.Context())
	r, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// call validates, plans and runs one call (no approval).
func call(t *testing.T, r *tool.Registry, name, args string) (tool.Plan, tool.Result) {
	t.Helper()
	env := tool.Env{Workspace: "/", SessionID: "s", CallID: "c", OutputLimit: 65536}
	p, res, ok := r.Prepare(env, name, json.RawMessage(args))
	if !ok {
		return p, res
	}
	return p, p.Run(t.Context())
}

// pids are the PIDs the fake servers recorded in dir.
func pids(t *testing.T, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		if p, ok := strings.CutPrefix(e.Name(), "pid-"); ok {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
		}
	}
	return out
}

// readPid waits for a file holding one PID.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			t.Cleanup(func() { _ = syscall.Kill(n, syscall.SIGKILL) })
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
