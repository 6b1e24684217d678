package app

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/tool"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}

func newApp(t *testing.T, env map[string]string) *App {
	t.Helper()
	a := New(Options{Layout: paths.Layout{Home: t.TempDir()}, Env: env})
	t.Cleanup(a.Close)
	return a
}

// TestMCPServerResolution: how a configured server becomes what the MCP
// manager runs: a small base environment, env_from and env on top, the
// command looked up in that PATH, the workspace as the default directory,
// and unusable settings reported as a problem rather than failing.
func TestMCPServerResolution(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "srv")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": bin, "HOME": "/home/u", "OPENAI_API_KEY": "sk-secret", "GH_TOKEN": "gh-1", "TERM": "xterm",
		"SCV_DELEGATION_DEPTH": "1", "MCP_TOKEN": "tok"}
	a := newApp(t, env)
	cfg := config.Defaults("/skills")
	cfg.MCP.Servers = map[string]config.MCPServer{
		"gh": {Command: "srv", Args: []string{"--stdio"}, EnvFrom: []string{"GH_TOKEN"}, Env: map[string]config.Secret{"LOG": "warn", "HOME": "/override"},
			Enabled: true, StartupTimeoutSeconds: 5, ToolTimeoutSeconds: 7, Risk: config.RiskProcess, Tools: []string{"a"}, ReadOnlyTools: []string{"a"}},
		"web":  {URL: "http://127.0.0.1:1/mcp", Headers: map[string]config.Secret{"X-Team": "t"}, BearerTokenEnv: "MCP_TOKEN", Enabled: true, Risk: config.RiskNetwork},
		"off":  {Command: "srv", Enabled: false},
		"bad":  {Command: "nope", EnvFrom: []string{"UNSET_VAR"}, Enabled: true, Cwd: "/srv"},
		"rel":  {Command: "./tool/run", Enabled: true},
		"nobe": {URL: "http://127.0.0.1:1/mcp", BearerTokenEnv: "UNSET_TOKEN", Enabled: true},
	}
	got := a.MCPServers(&cfg, "/ws")
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"bad", "gh", "nobe", "rel", "web"}, names); diff != "" {
		t.Errorf("enabled servers (-want +got):\n%s", diff)
	}
	want := mcp.Server{Name: "gh", Command: exe, Args: []string{"--stdio"}, Dir: "/ws",
		Env:            []string{"GH_TOKEN=gh-1", "HOME=/override", "LOG=warn", "PATH=" + bin, "SCV_DELEGATION_DEPTH=1", "TERM=xterm"},
		StartupTimeout: 5 * time.Second, ToolTimeout: 7 * time.Second, Risk: tool.Process, Tools: []string{"a"}, ReadOnlyTools: []string{"a"}}
	if diff := cmp.Diff(want, got[1]); diff != "" {
		t.Errorf("gh (-want +got):\n%s", diff)
	}
	web := got[4]
	if diff := cmp.Diff(map[string]string{"X-Team": "t", "Authorization": "Bearer tok"}, web.Headers); diff != "" || web.Risk != tool.Network || web.Problem != "" {
		t.Errorf("web: %+v %s", web, diff)
	}
	bad := got[0]
	for _, s := range []string{"mcp.servers.bad.env_from names UNSET_VAR, which is not set in SCV's environment", `command "nope" is not found in PATH (` + bin + ")"} {
		if !strings.Contains(bad.Problem, s) {
			t.Errorf("bad.Problem = %q, want it to say %q", bad.Problem, s)
		}
	}
	if bad.Dir != "/srv" {
		t.Errorf("bad.Dir = %q", bad.Dir)
	}
	if rel := got[3]; !strings.Contains(rel.Problem, "command /ws/tool/run is not an executable file") {
		t.Errorf("rel.Problem = %q", rel.Problem)
	}
	if p := got[2].Problem; p != "mcp.servers.nobe.bearer_token_env names UNSET_TOKEN, which is not set in SCV's environment" {
		t.Errorf("nobe.Problem = %q", p)
	}
	for _, s := range got {
		if slices.ContainsFunc(s.Env, func(kv string) bool { return strings.HasPrefix(kv, "OPENAI_API_KEY=") }) {
			t.Errorf("%s gets SCV's API key", s.Name)
		}
	}
}

// TestSessionMCPTools: a session offers the MCP tools from its first model
// request on and releases its lease when closed; a tool-free session gets
// none and starts nothing.
func TestSessionMCPTools(t *testing.T) {
	dir := t.TempDir()
	exe, fakeEnv := mcptest.Fake(dir)
	var envTOML []string
	for _, kv := range fakeEnv {
		k, v, _ := strings.Cut(kv, "=")
		envTOML = append(envTOML, k+" = "+strconv.Quote(v))
	}
	f := newFixture(t, "[mcp.servers.fake]\ncommand = "+strconv.Quote(exe)+"\nread_only_tools = [\"echo\"]\nenv = { "+strings.Join(envTOML, ", ")+" }\n")
	t.Cleanup(f.app.Close)
	f.fake.Script(modeltest.ToolCall("c1", "mcp__fake__echo", `{"text":"via session"}`))
	f.fake.Script(modeltest.Text("ok"))

	// No tools: no MCP server starts.
	_, info, err := f.app.NewSession(t.Context(), "s0", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, NoTools: true}})
	if err != nil {
		t.Fatal(err)
	}
	info.Close()
	if n := countPids(t, dir); n != 0 {
		t.Fatalf("a tool-free session started %d servers", n)
	}

	sess, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}})
	if err != nil {
		t.Fatal(err)
	}
	var evs []proto.TurnEvent
	sess.RunTurn(t.Context(), "t1", "call echo", func(e proto.TurnEvent) { evs = append(evs, e) })
	info.Close()
	last := evs[len(evs)-1]
	if _, ok := last.(*proto.TurnCompleted); !ok {
		t.Fatalf("turn ended with %+v", last)
	}
	reqs := f.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if names := reqs[0].ToolNames(); !slices.Contains(names, "mcp__fake__echo") || !slices.Contains(names, "bash") {
		t.Errorf("first request offers %v", names)
	}
	found := false
	for _, it := range reqs[1].InputItems() {
		if it["type"] == "function_call_output" && it["output"] == "echo: via session" {
			found = true
		}
	}
	if !found {
		t.Errorf("second request lacks the tool's output: %v", reqs[1].InputItems())
	}
	if n := countPids(t, dir); n != 1 {
		t.Errorf("%d servers started, want 1", n)
	}
}

func countPids(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "pid-") {
			n++
		}
	}
	return n
}

// TestClientMCPServers: the servers a client adds to one session get the
// base environment plus the client's variables, the workspace as their
// directory and risk process for every tool; a bad entry is an error
// naming its field.
func TestClientMCPServers(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "srv"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := newApp(t, map[string]string{"PATH": bin, "HOME": "/home/u", "OPENAI_API_KEY": "sk-secret"})
	cfg := config.Defaults("/skills")
	cfg.MCP.Servers = map[string]config.MCPServer{"gh": {Command: "srv", Enabled: true}}
	got, err := a.ClientMCPServers(&cfg, []proto.MCPServer{
		{Name: "editor", Command: "srv", Args: []string{"-v"}, Env: map[string]string{"TOKEN": "t"}},
		{Name: "web", URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
	}, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	want := []mcp.Server{
		{Name: "editor", Command: filepath.Join(bin, "srv"), Args: []string{"-v"}, Env: []string{"HOME=/home/u", "PATH=" + bin, "TOKEN=t"}, Dir: "/ws",
			StartupTimeout: 30 * time.Second, ToolTimeout: 120 * time.Second, Risk: tool.Process},
		{Name: "web", URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer x"},
			StartupTimeout: 30 * time.Second, ToolTimeout: 120 * time.Second, Risk: tool.Process},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		list []proto.MCPServer
		want string
	}{
		{[]proto.MCPServer{{Name: "bad name", Command: "srv"}}, `mcp_servers[0].name "bad name" is not a valid MCP server name`},
		{[]proto.MCPServer{{Name: "gh", Command: "srv"}}, `mcp_servers[0].name "gh" is already the name of another MCP server`},
		{[]proto.MCPServer{{Name: "a", Command: "srv"}, {Name: "a", Command: "srv"}}, `mcp_servers[1].name "a" is already`},
		{[]proto.MCPServer{{Name: "a"}}, `mcp_servers[0] (a) needs exactly one of command`},
		{[]proto.MCPServer{{Name: "a", Command: "srv", URL: "http://x"}}, `needs exactly one of command`},
		{[]proto.MCPServer{{Name: "a", URL: "file:///x"}}, `mcp_servers[0].url "file:///x" is not an http:// or https:// URL`},
		{[]proto.MCPServer{{Name: "a", Command: "missing-srv"}}, `mcp_servers[0].command: command "missing-srv" is not found`},
	} {
		if _, err := a.ClientMCPServers(&cfg, c.list, "/ws"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ClientMCPServers(%+v) = %v, want an error with %q", c.list, err, c.want)
		}
	}
}
