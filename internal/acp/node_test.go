package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// acpInstallHint is what to run when the official client is missing or
// older than its lock file.
const acpInstallHint = "run .ci/npm-install internal/acp/testdata/npm (.ci/run does) to install it into .cache/acp-npm"

// requireSDK finds Node.js and the installed @agentclientprotocol/sdk. It
// skips the test when Node.js is not installed and fails it, saying what to
// run, when the SDK is not installed or older than its lock file: tests
// never reach the network themselves.
func requireSDK(t testing.TB) (node, sdk string) {
	t.Helper()
	node, _, dest := mcptest.RequireLockedInstall(t, "internal/acp/testdata/npm", ".cache/acp-npm",
		"the test with the official ACP TypeScript client", "the ACP client SDK packages", acpInstallHint)
	sdk = filepath.Join(dest, "node_modules", "@agentclientprotocol", "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "dist", "v1", "stable", "acp.js")); err != nil {
		t.Fatalf("the ACP client SDK is incomplete (%v): %s", err, acpInstallHint)
	}
	return node, sdk
}

// bashCall is a model response asking for one bash call.
func bashCall(id, command string) modeltest.Step {
	args, _ := json.Marshal(map[string]string{"command": command})
	return modeltest.ToolCall(id, "bash", string(args))
}

// TestOfficialClient drives the real scv acp binary with the official ACP
// TypeScript client (testdata/node/client.mjs) through a plain answer,
// streamed chunks, bash allowed once, allowed always, rejected, a write's
// diff, a cancel during a long bash call, deny-on-risk, plan mode with its
// plan update, an editor MCP
// server, the load of a TUI-made session and bad input; scv acp must exit
// 0 at the end of its input.
func TestOfficialClient(t *testing.T) {
	node, sdk := requireSDK(t)
	bin := scvBinary(t)
	home, ws, pidDir := t.TempDir(), testutil.TempDir(t), t.TempDir()
	testutil.WriteFile(t, filepath.Join(ws, "notes.txt"), "one\ntwo\n")
	fake := modeltest.New(t)
	fake.Models = []string{"gpt-4.1-mini", "gpt-5"}
	longPid := filepath.Join(pidDir, "long.pid")
	write, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": "one\nTWO\n", "mode": "replace"})
	planned, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": "PLANNED", "mode": "replace"})
	for _, steps := range [][]modeltest.Step{
		{modeltest.Text("an answer shown in the TUI")}, // the stored session's turn
		{modeltest.Reasoning("pondering"), modeltest.Text("Hel", "lo", " world")},
		{bashCall("b1", "echo once > once.txt")}, {modeltest.Text("ran")},
		{bashCall("b2", "echo again")}, {bashCall("b3", "echo again")}, {modeltest.Text("twice")},
		{bashCall("b4", "touch nope.txt")}, {modeltest.Text("ok")},
		{modeltest.ToolCall("w1", "write", string(write))}, {modeltest.Text("edited")},
		{bashCall("b5", "sleep 60 & echo $! > "+longPid+"; wait")},
		{bashCall("d1", "touch denied.txt")}, {modeltest.Text("refused")},
		{modeltest.ToolCall("p1", "write", string(planned)),
			modeltest.ToolCall("p2", "todo_write", `{"todos":[{"content":"change notes","status":"in_progress"},{"content":"check them","status":"pending"}]}`)},
		{modeltest.Text("## Plan")},
		{modeltest.ToolCall("m1", "mcp__editor__echo", `{"text":"hello mcp"}`)}, {modeltest.Text("echoed")},
		{modeltest.Text("continued")},
		{bashCall("r1", "sleep 60 & echo $! > "+filepath.Join(pidDir, "eof.pid")+"; wait")}, // runs when stdin ends
	} {
		fake.Script(steps...)
	}
	testutil.WriteFile(t, filepath.Join(home, "config.toml"), fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", fake.URL()))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SCV_HOME=" + home, "OPENAI_API_KEY=sk-test-key"}
	stored := tuiSession(t, bin, env, ws, "a prompt typed in the TUI")

	mcpDir := t.TempDir()
	mcpCmd, mcpEnv := mcptest.Fake(mcpDir)
	var vars []map[string]string
	for _, kv := range mcpEnv {
		k, v, _ := strings.Cut(kv, "=")
		vars = append(vars, map[string]string{"name": k, "value": v})
	}
	mcpJSON, _ := json.Marshal(vars)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "node", "client.mjs"))
	cmd.Env = append(env, "SCV_BIN="+bin, "WORK="+ws, "ACP_SDK="+sdk, "MCP_CMD="+mcpCmd, "MCP_ENV="+string(mcpJSON),
		"STORED="+stored, "PID_DIR="+pidDir)
	out, err := cmd.CombinedOutput()
	t.Logf("client:\n%s", out)
	if err != nil {
		t.Fatalf("the official client failed: %v", err)
	}
	for _, want := range []string{"plain", "allow_once", "allow_always", "reject", "write_diff", "cancel", "set_mode", "plan", "mcp", "load", "bad_params", "eof", "raw_bad_input", "eof_running"} {
		if !strings.Contains(string(out), "ok "+want+"\n") && !strings.Contains(string(out), "ok "+want+" (") {
			t.Errorf("scenario %s did not pass", want)
		}
	}
	// The model was told of the rejection.
	told := false
	for _, r := range fake.Requests() {
		told = told || strings.Contains(string(r.Raw), "denied: the user did not approve this bash call")
	}
	if !told {
		t.Error("no model request carried the rejected call's result")
	}
	// The editor's MCP server was stopped with scv acp.
	marks, _ := filepath.Glob(filepath.Join(mcpDir, "pid-*"))
	if len(marks) == 0 {
		t.Error("the editor's MCP server never started")
	}
	for _, m := range marks {
		pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "pid-"))
		if !testutil.WaitGone(5*time.Second, pid) {
			t.Errorf("the editor's MCP server (pid %d) survived scv acp", pid)
		}
	}
	for _, f := range []string{longPid, filepath.Join(pidDir, "eof.pid")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 || !testutil.WaitGone(5*time.Second, pid) {
			t.Errorf("a bash call's sleep (pid %d, %s) survived", pid, filepath.Base(f))
		}
	}
}

// tuiSession stores a session with origin tui as the TUI makes one: one
// turn through `scv server --stdio`, whose end closes it.
func tuiSession(t *testing.T, bin string, env []string, ws, prompt string) string {
	t.Helper()
	cmd := exec.Command(bin, "server", "--stdio")
	cmd.Env = env
	in, out := testutil.StartPiped(t, cmd)
	lines := make(chan map[string]any, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	})
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	await := func(typ string) map[string]any {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("scv server ended before %s", typ)
				}
				if m["type"] == typ {
					return m
				}
				if m["type"] == "error" || m["type"] == "turn.failed" {
					t.Fatalf("scv server: %v", m)
				}
			case <-deadline:
				t.Fatalf("no %s from scv server", typ)
			}
		}
	}
	send(map[string]any{"type": "initialize", "request_id": "i", "protocol_version": 1, "client": map[string]string{"name": "scv-tui", "version": "test"}})
	await("initialized")
	send(map[string]any{"type": "session.start", "request_id": "s", "cwd": ws, "origin": "tui"})
	id, _ := await("session.started")["session_id"].(string)
	send(map[string]any{"type": "turn.start", "request_id": "t", "session_id": id, "prompt": prompt})
	await("turn.completed")
	in.Close()
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("scv server --stdio: %v", err)
	}
	return id
}
