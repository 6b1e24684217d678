package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// mcpConfig is a [mcp.servers.NAME] table running command with args and
// the given environment.
func mcpConfig(name, command string, args, env []string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp.servers.%s]\ncommand = %q\n", name, command)
	if len(args) > 0 {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(q, ", "))
	}
	if len(env) > 0 {
		var kv []string
		for _, e := range env {
			k, v, _ := strings.Cut(e, "=")
			kv = append(kv, fmt.Sprintf("%s = %q", k, v))
		}
		fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
	}
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	return b.String()
}

// processesWithEnv lists the live processes whose environment holds kv.
func processesWithEnv(kv string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(bytes.Split(b, []byte{0}), func(x []byte) bool { return string(x) == kv }) {
			continue
		}
		if state, _, ok := statOf(pid); ok && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestExecMCPToolLoop: the whole tool loop through `scv exec`, the fake
// model choosing a tool of the real server-everything (npm, stdio): the
// tool is offered from the first request, the approval names the server,
// the tool and its arguments, the output reaches the model, and no server
// process is left when exec ends.
func TestExecMCPToolLoop(t *testing.T) {
	n := mcptest.RequireNPM(t)
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("m1", "mcp__everything__echo", `{"message":`, `"hello mcp"}`))
	fm.Script(modeltest.Text("Echoed."))
	in := newInstance(t, providerConfig(fm.URL(), mcpConfig("everything", n.Node, []string{n.Everything, "stdio"}, nil)))
	r := in.runOK(in.env, "", "exec", "--yes", "echo through mcp")
	if r.stdout != "Echoed.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	for _, s := range []string{"approval for mcp__everything__echo (risk process)", "MCP server everything, tool echo", `arguments: {"message":"hello mcp"}`} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	reqs := modelRequests(t, fm, 2)
	if names := reqs[0].ToolNames(); !slices.Contains(names, "mcp__everything__echo") || !slices.Contains(names, "bash") {
		t.Errorf("first request offers %v", names)
	}
	if out, ok := callOutput(reqs[1], "m1"); !ok || out != "Echo: hello mcp" {
		t.Errorf("the model saw %q (present %v)", out, ok)
	}
	// The server ran with the instance's HOME; nothing with it survives.
	time.Sleep(100 * time.Millisecond)
	if left := processesWithEnv("HOME=" + in.user); len(left) > 0 {
		t.Errorf("processes left behind after exec: %v", left)
	}
}

// TestDaemonMCPSharedAndStopped: two sessions of one workspace in the
// daemon share one server process (a Go server that also started a child
// with setsid); `scv stop` leaves neither the server nor its escapee.
func TestDaemonMCPSharedAndStopped(t *testing.T) {
	fm := modeltest.New(t)
	for range 2 {
		fm.Script(modeltest.ToolCall("m1", "mcp__fake__echo", `{"text":"from the daemon"}`))
		fm.Script(modeltest.Text("done"))
	}
	dir := t.TempDir()
	exe, env := mcptest.Fake(dir, mcptest.EnvSetsid+"=1")
	in := newInstance(t, providerConfig(fm.URL(), mcpConfig("fake", exe, nil, env, `read_only_tools = ["echo"]`)))
	d := in.startDaemon(in.env)
	for i := range 2 {
		c := in.connect()
		sid := in.startSession(c, proto.SessionStart{}).SessionID
		sendTurn(t, c, sid, "use the mcp tool")
		evs := until(t, c, proto.EventTurnCompleted)
		done := ofType[*proto.ToolCompleted](evs)
		if len(done) == 0 || !done[len(done)-1].Success || done[len(done)-1].Output != "echo: from the daemon" {
			t.Fatalf("session %d: tool.completed = %+v; daemon stderr:\n%s", i, done, d.stderr)
		}
	}
	var pids []int
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if p, ok := strings.CutPrefix(e.Name(), "pid-"); ok {
			n, _ := strconv.Atoi(p)
			pids = append(pids, n)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d server processes for two sessions of one workspace, want 1", len(pids))
	}
	b, err := os.ReadFile(filepath.Join(dir, "setsid.pid"))
	if err != nil {
		t.Fatal(err)
	}
	escapee, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	pids = append(pids, escapee)
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if !testutil.AnyRunning(escapee) || !testutil.AnyRunning(pids[:1]...) {
		t.Fatal("server or escapee not running before the stop")
	}
	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: exit %d, %s", r.code, r.stderr)
	}
	if !d.wait(6 * time.Second) {
		t.Fatalf("daemon still running after scv stop; stderr:\n%s", d.stderr)
	}
	if !testutil.WaitGone(2500*time.Millisecond, pids...) {
		t.Fatalf("MCP processes %v survived the daemon's stop; stderr:\n%s", pids, d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "mcp server started") {
		t.Errorf("the daemon log does not record the server start:\n%s", d.stderr)
	}
}
