package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestSandboxedServer: a stdio server under the sandbox runs and answers,
// and what it runs cannot write outside its directory, read hidden paths
// or reach a loopback listener; the same server unsandboxed can (so each
// attempt is real).
func TestSandboxedServer(t *testing.T) {
	testutil.RequireSandbox(t)
	root := t.TempDir()
	outside, hidden := filepath.Join(root, "outside"), filepath.Join(root, "hidden")
	for _, d := range []string{outside, hidden} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hidden, "key"), []byte("SECRET-key"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := testutil.Listen(t)
	port := l.Port()
	attempts := []string{
		"echo x > " + outside + "/new",
		"cat " + hidden + "/key",
		"exec 3<>/dev/tcp/127.0.0.1/" + port,
	}
	for _, sandboxed := range []bool{false, true} {
		m, _ := newManager(t, nil)
		srv, dir := fake(t, mcptest.EnvShell+"=1")
		if sandboxed {
			srv.Sandbox = sandbox.Config{Mode: sandbox.ModeWorkspaceWrite, DenyRead: []string{hidden}}
		}
		lease := m.Acquire(dir, []Server{srv})
		r := registry(t, lease)
		for _, a := range attempts {
			// bash, for /dev/tcp
			_, res := call(t, r, "mcp__fake__sh", `{"command":"bash -c '`+strings.ReplaceAll(a, `"`, `\"`)+`'"}`)
			exit0 := strings.HasPrefix(res.Output, "exit 0\n")
			if sandboxed && exit0 {
				t.Errorf("sandboxed server: %q succeeded: breached\n%s", a, res.Output)
			}
			if !sandboxed && !exit0 {
				t.Errorf("unsandboxed server: %q failed, so the attempt proves nothing:\n%s", a, res.Output)
			}
		}
		_, res := call(t, r, "mcp__fake__sh", `{"command":"echo ok > inside && cat inside"}`)
		if res.Output != "exit 0\nok\n" {
			t.Errorf("sandboxed %v: writing in the server's directory: %q", sandboxed, res.Output)
		}
		if _, res := call(t, r, "mcp__fake__echo", `{"text":"hi"}`); res.Output != "echo: hi" {
			t.Errorf("sandboxed %v: echo answered %q", sandboxed, res.Output)
		}
		lease.Release()
		m.Close()
		if sandboxed {
			if n := l.Accepted(); n != 1 {
				t.Errorf("the listener counted %d connections; want the unsandboxed one only", n)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("the sandboxed server wrote %d files outside its directory", len(ents))
			}
		} else if err := os.Remove(filepath.Join(outside, "new")); err != nil {
			t.Errorf("the unsandboxed server's write outside: %v", err)
		}
	}
}
