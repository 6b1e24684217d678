package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestSharedPerWorkspaceAndIdleStop: sessions of one workspace share one
// server process; another workspace gets its own; a server whose last lease
// is released stops after the idle timeout, and a new lease before that
// keeps it.
func TestSharedPerWorkspaceAndIdleStop(t *testing.T) {
	m, logs := newManager(t, func(o *Options) { o.IdleTimeout = 300 * time.Millisecond })
	srv, dir := fake(t)
	ws1, ws2 := t.TempDir(), t.TempDir()
	a, b, c := m.Acquire(ws1, []Server{srv}), m.Acquire(ws1, []Server{srv}), m.Acquire(ws2, []Server{srv})
	for _, l := range []*Lease{a, b, c} {
		if n := len(registry(t, l).Names()); n == 0 {
			t.Fatal("no tools")
		}
	}
	started := pids(t, dir)
	if len(started) != 2 || m.Running() != 2 {
		t.Fatalf("%d processes (%d running) for 3 sessions in 2 workspaces, want 2", len(started), m.Running())
	}
	a.Release()
	a.Release() // twice is harmless
	time.Sleep(600 * time.Millisecond)
	if m.Running() != 2 {
		t.Fatal("a server with a lease left was stopped")
	}
	b.Release()
	c.Release()
	for _, p := range started {
		if !testutil.WaitGone(5*time.Second, p) {
			t.Errorf("server %d still runs after the idle timeout", p)
		}
	}
	if m.Running() != 0 || !strings.Contains(logs.String(), "mcp server idle, stopping") {
		t.Errorf("running %d; logs:\n%s", m.Running(), logs)
	}
	// A new session starts it again.
	d := m.Acquire(ws1, []Server{srv})
	defer d.Release()
	if _, res := call(t, registry(t, d), "mcp__fake__echo", `{"text":"back"}`); !res.Success {
		t.Errorf("after an idle stop: %+v", res)
	}
	if n := len(pids(t, dir)); n != 3 {
		t.Errorf("%d starts, want 3", n)
	}
}

// TestReacquireCancelsIdleStop: a lease taken during the idle period keeps
// the same process.
func TestReacquireCancelsIdleStop(t *testing.T) {
	m, _ := newManager(t, func(o *Options) { o.IdleTimeout = 400 * time.Millisecond })
	srv, dir := fake(t)
	ws := t.TempDir()
	a := m.Acquire(ws, []Server{srv})
	registry(t, a)
	a.Release()
	b := m.Acquire(ws, []Server{srv})
	defer b.Release()
	time.Sleep(800 * time.Millisecond)
	registry(t, b)
	if n := len(pids(t, dir)); n != 1 || m.Running() != 1 {
		t.Errorf("%d starts, %d running; want the first process kept", n, m.Running())
	}
}

// TestCloseStopsSetsidChild: Close stops a server and what it started in
// another session (found by its tag), and calls afterwards fail cleanly.
func TestCloseStopsSetsidChild(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, dir := fake(t, mcptest.EnvSetsid+"=1")
	l := m.Acquire(t.TempDir(), []Server{srv})
	r := registry(t, l)
	escapee := readPid(t, filepath.Join(dir, "setsid.pid"))
	server := pids(t, dir)[0]
	if !testutil.Running(escapee) || !testutil.Running(server) {
		t.Fatal("not started")
	}
	began := time.Now()
	m.Close()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Close took %v", took)
	}
	for _, p := range []int{server, escapee} {
		if !testutil.WaitGone(time.Second, p) {
			t.Errorf("process %d survived Close", p)
		}
	}
	if _, res := call(t, r, "mcp__fake__echo", `{"text":"late"}`); res.Error != tool.Unavailable || !strings.Contains(res.Output, "shutting down") {
		t.Errorf("call after Close = %+v", res)
	}
	l.Release()
	// A lease taken after Close offers nothing and starts nothing.
	l2 := m.Acquire(t.TempDir(), []Server{srv})
	if tools, _ := l2.Tools(t.Context()); len(tools) != 0 || len(pids(t, dir)) != 1 {
		t.Errorf("after Close: %d tools, %d starts", len(tools), len(pids(t, dir)))
	}
}

// TestStartFailures: a server that exits at start, or does not answer in
// time, offers no tools; the state says why (with its stderr), the log too,
// and it is tried again only after the backoff.
func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		extra   []string
		startup time.Duration
		want    []string
	}{
		{"exits", []string{mcptest.EnvExit + "=2"}, 20 * time.Second,
			[]string{"the server exited during start-up (exit status 2); its stderr ends with: fake: configured to fail at start"}},
		{"too slow", []string{mcptest.EnvSleep + "=5000"}, 300 * time.Millisecond,
			[]string{"no answer within 0 s (mcp.servers.fake.startup_timeout_seconds)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, logs := newManager(t, func(o *Options) { o.Backoff = time.Hour; o.MaxBackoff = time.Hour })
			srv, dir := fake(t, tt.extra...)
			srv.StartupTimeout = tt.startup
			l := lease(t, m, srv)
			if tools, _ := l.Tools(t.Context()); len(tools) != 0 {
				t.Fatalf("%d tools from a failed server", len(tools))
			}
			st := l.States()[0]
			for _, w := range tt.want {
				if st.Err == nil || !strings.Contains(st.Err.Error(), w) {
					t.Errorf("state error %v, want %q", st.Err, w)
				}
			}
			if !strings.Contains(logs.String(), "mcp server did not start") {
				t.Errorf("not logged:\n%s", logs)
			}
			// In backoff: no new start, and a call says when it retries.
			l.Tools(t.Context())
			if n := len(pids(t, dir)); n != 1 {
				t.Errorf("%d starts during the backoff, want 1", n)
			}
			var ue *unavailableError
			if !errors.As(l.States()[0].Err, &ue) {
				t.Errorf("state during backoff: %v", l.States()[0].Err)
			}
			for _, p := range pids(t, dir) {
				if !testutil.WaitGone(3*time.Second, p) {
					t.Errorf("failed server %d still runs", p)
				}
			}
		})
	}
}

// TestProblemServer: a server the configuration cannot start (a missing
// variable) is reported, never started.
func TestProblemServer(t *testing.T) {
	m, logs := newManager(t, nil)
	l := m.Acquire(t.TempDir(), []Server{{Name: "gh", Problem: "env_from names GITHUB_TOKEN, which is not set"}})
	defer l.Release()
	if tools, _ := l.Tools(t.Context()); len(tools) != 0 {
		t.Fatal("tools from a server with a problem")
	}
	if st := l.States()[0]; st.Err == nil || st.Err.Error() != "env_from names GITHUB_TOKEN, which is not set" || st.Running {
		t.Errorf("state = %+v", st)
	}
	if !strings.Contains(logs.String(), "GITHUB_TOKEN") {
		t.Errorf("not logged:\n%s", logs)
	}
}

// TestStderrBoundedInLog: a chatty server's stderr reaches the log, at most
// stderrMaxLines lines, then one note that the rest was dropped.
func TestStderrBoundedInLog(t *testing.T) {
	m, logs := newManager(t, nil)
	srv, _ := fake(t, mcptest.EnvStderrLines+"=500")
	l := lease(t, m, srv)
	registry(t, l)
	var lines, drops int
	deadline := time.Now().Add(5 * time.Second)
	for drops == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		lines = strings.Count(logs.String(), `line="fake stderr line `)
		drops = strings.Count(logs.String(), stderrDropMessage)
	}
	if lines != stderrMaxLines || drops != 1 || !strings.Contains(logs.String(), `line="fake stderr line 0"`) {
		t.Errorf("%d stderr lines and %d drop notes logged, want %d and 1", lines, drops, stderrMaxLines)
	}
}

// TestHTTPServer: a streamable HTTP server (the SDK's own, on 127.0.0.1)
// gets the configured headers, offers its tools and answers calls.
func TestHTTPServer(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "http-fake", Version: "2"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hello", Description: "Say hello."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello over http"}}}, nil, nil
		})
	var mu sync.Mutex
	var auth []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Team"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager's Close, which ends the streams
	m, _ := newManager(t, nil)
	srv := Server{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer t0k", "X-Team": "tools"},
		StartupTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second, Risk: tool.Network}
	l := lease(t, m, srv)
	p, res := call(t, registry(t, l), "mcp__web__hello", `{}`)
	if !res.Success || res.Output != "hello over http" || p.Risk != tool.Network {
		t.Fatalf("risk %q, result %+v", p.Risk, res)
	}
	if st := l.States()[0]; st.Transport != "http" || st.Info != "http-fake 2" {
		t.Errorf("state = %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if a != "Bearer t0k|tools" {
			t.Errorf("a request carried %q", a)
		}
	}
	if len(auth) < 3 {
		t.Errorf("only %d requests seen", len(auth))
	}
}
