package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestFakeTools: the tools of a server become SCV tools with sanitized
// names; a name collision and an unusable schema are left out with a clear
// reason; every kind of content is rendered; the risk comes from the
// configuration, never from the server's hints.
func TestFakeTools(t *testing.T) {
	m, logs := newManager(t, nil)
	srv, _ := fake(t)
	srv.ReadOnlyTools = []string{"add"}
	l := lease(t, m, srv)
	r := registry(t, l)
	long := ToolName("fake", mcptest.LongName)
	want := []string{"mcp__fake__a_b", "mcp__fake__add", "mcp__fake__add_tool", "mcp__fake__crash", "mcp__fake__echo", "mcp__fake__fail",
		"mcp__fake__hang", "mcp__fake__huge", "mcp__fake__media", "mcp__fake__pid", "mcp__fake__slow", long, "mcp__fake__weird_name_with_dots_"}
	slices.Sort(want)
	if diff := cmp.Diff(want, r.Names()); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	if len(long) != 64 || !strings.HasPrefix(long, "mcp__fake__very_long_tool_name_") {
		t.Errorf("long name %q (%d characters)", long, len(long))
	}
	st := l.States()[0]
	skipped := strings.Join(st.Skipped, "\n")
	for _, s := range []string{`tool "a_b" is not offered: its name becomes mcp__fake__a_b, like that of tool "a.b" of server fake`,
		`tool "bad_schema" is not offered: its input schema is unusable`} {
		if !strings.Contains(skipped, s) {
			t.Errorf("skipped lacks %q:\n%s", s, skipped)
		}
		if !strings.Contains(logs.String(), "mcp tool not offered") {
			t.Errorf("skipped tool not logged:\n%s", logs)
		}
	}
	if !st.Running || st.Err != nil || st.Info != "scv-fake 1.0" {
		t.Errorf("state = %+v", st)
	}

	tests := []struct {
		name, args string
		risk       tool.Risk
		want       tool.Result
	}{
		{"mcp__fake__echo", `{"text":"hi"}`, tool.Process, tool.Result{Success: true, Output: "echo: hi"}},
		{"mcp__fake__add", `{"a":1,"b":2}`, tool.ReadOnly, tool.Result{Success: true, Output: `{"sum":3}`, JSON: true}},
		{"mcp__fake__fail", `{}`, tool.Process, tool.Result{Error: tool.Failed, Output: "the thing went wrong"}},
		{"mcp__fake__media", `{}`, tool.Process, tool.Result{Success: true, Output: "here is media\n[image: image/png, 1234 bytes]\n[audio: audio/wav, 99 bytes]\n" +
			"[resource link: file:///data/report.pdf, report, application/pdf, 2048 bytes]\n[resource: mem://notes, text/plain, text, 11 bytes]"}},
		{"mcp__fake__a_b", `{}`, tool.Process, tool.Result{Success: true, Output: "ran a.b"}},
		{"mcp__fake__weird_name_with_dots_", `{}`, tool.Process, tool.Result{Success: true, Output: "ran weird name/with.dots!"}},
		{long, `{}`, tool.Process, tool.Result{Success: true, Output: "ran " + mcptest.LongName}},
		// Validation against the server's schema happens before any call.
		{"mcp__fake__echo", `{"text":5}`, "", tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: `text` has type integer, want string"}},
		{"mcp__fake__echo", `{}`, "", tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: missing required field `text`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.args, func(t *testing.T) {
			p, got := call(t, r, tt.name, tt.args)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if p.Risk != tt.risk {
				t.Errorf("risk = %q, want %q", p.Risk, tt.risk)
			}
		})
	}
	p, _ := call(t, r, "mcp__fake__echo", `{"text":"hi"}`)
	wantSummary := "MCP server fake, tool echo\narguments: {\"text\":\"hi\"}\nthe server describes this tool as: \"Echo\", read-only (not verified)"
	if p.Summary != wantSummary {
		t.Errorf("summary = %q, want %q", p.Summary, wantSummary)
	}
	echo, _ := r.Get("mcp__fake__echo")
	if tool.RiskClassOf(echo) != "process" || !strings.HasPrefix(echo.Description(), "Echo the text back.\n(tool \"echo\" of the MCP server \"fake\")") {
		t.Errorf("echo: risk class %q, description %q", tool.RiskClassOf(echo), echo.Description())
	}
}

// TestSummaryBoundsArguments: the approval summary shows the full
// arguments up to a bound.
func TestSummaryBoundsArguments(t *testing.T) {
	r := &remote{server: "s", name: "t"}
	big := `{"text":"` + strings.Repeat("x", 10000) + `"}`
	s := r.summary(json.RawMessage(big))
	if len(s) > maxSummaryArgs+200 || !strings.Contains(s, "(10011 bytes in all)") {
		t.Errorf("summary of %d bytes: %q…", len(s), s[:100])
	}
}

// TestHugeOutputBounded: the output the model sees is at most the limit,
// counted on the text as sent, for text and structured results.
func TestHugeOutputBounded(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, _ := fake(t)
	srv.ToolTimeout = time.Minute // megabytes under the race detector are slow
	l := lease(t, m, srv)
	r := registry(t, l)
	for _, limit := range []int{64, 65536} {
		for _, args := range []string{`{"bytes":400000}`, `{"bytes":400000,"json":true}`, `{"bytes":200000,"chunk":"\u2028\"\\\n"}`} {
			env := tool.Env{OutputLimit: limit}
			p, res, ok := r.Prepare(env, "mcp__fake__huge", json.RawMessage(args))
			if !ok {
				t.Fatalf("prepare: %+v", res)
			}
			res = p.Run(t.Context())
			if !res.Success || !res.Truncated || res.JSON || len(res.Output) > limit {
				t.Errorf("limit %d, %s: success %v truncated %v json %v, %d bytes", limit, args, res.Success, res.Truncated, res.JSON, len(res.Output))
			}
			if limit > 100 && !strings.Contains(res.Output, "[output cut: ") {
				t.Errorf("limit %d, %s: no cut marker in %q", limit, args, res.Output[max(0, len(res.Output)-80):])
			}
		}
	}
}

// TestCrashMidCallRestarts: a server that dies during a call fails that
// call with its exit status and stderr; the next call starts it again
// (after the backoff) and succeeds.
func TestCrashMidCallRestarts(t *testing.T) {
	m, logs := newManager(t, nil)
	srv, dir := fake(t)
	l := lease(t, m, srv)
	r := registry(t, l)
	_, res := call(t, r, "mcp__fake__crash", `{}`)
	if res.Error != tool.Failed || !strings.Contains(res.Output, "ended during the call: the server exited (exit status 3)") ||
		!strings.Contains(res.Output, "crashing on purpose") {
		t.Fatalf("crash result = %+v", res)
	}
	_, res = call(t, r, "mcp__fake__echo", `{"text":"again"}`)
	if !res.Success || res.Output != "echo: again" {
		t.Fatalf("call after the crash = %+v", res)
	}
	if n := len(pids(t, dir)); n != 2 {
		t.Errorf("server started %d times, want 2", n)
	}
	if !strings.Contains(logs.String(), "mcp server ended") {
		t.Errorf("crash not logged:\n%s", logs)
	}
	// While in backoff, a model request keeps the tools it had.
	if names := registry(t, l).Names(); !slices.Contains(names, "mcp__fake__echo") {
		t.Errorf("tools after restart: %v", names)
	}
}

// TestHangTimesOut: a call the server never answers ends at the tool
// timeout with a limit result, and the server is told to stop it.
func TestHangTimesOut(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, dir := fake(t)
	srv.ToolTimeout = 500 * time.Millisecond
	l := lease(t, m, srv)
	r := registry(t, l)
	began := time.Now()
	_, res := call(t, r, "mcp__fake__hang", `{}`)
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("timed-out call took %v", took)
	}
	if res.Error != tool.Limit || !strings.Contains(res.Output, "did not answer within 0 s (mcp.servers.fake.tool_timeout_seconds)") {
		t.Errorf("result = %+v", res)
	}
	if !testutil.WaitFile(filepath.Join(dir, "cancelled-1"), 5*time.Second) {
		t.Error("the server was not told to stop the call")
	}
	// The server still works.
	if _, res := call(t, r, "mcp__fake__echo", `{"text":"x"}`); !res.Success {
		t.Errorf("echo after a timeout = %+v", res)
	}
}

// TestCancelNotifiesAndReturns: cancelling a call returns within 2 s with a
// cancelled result and sends notifications/cancelled.
func TestCancelNotifiesAndReturns(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, dir := fake(t)
	l := lease(t, m, srv)
	r := registry(t, l)
	p, res, ok := r.Prepare(tool.Env{}, "mcp__fake__hang", nil)
	if !ok {
		t.Fatal(res)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	res = p.Run(ctx)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("cancelled call returned after %v", took)
	}
	if res.Error != tool.Cancelled || !strings.Contains(res.Output, "told to stop the call") {
		t.Errorf("result = %+v", res)
	}
	if !testutil.WaitFile(filepath.Join(dir, "cancelled-1"), 5*time.Second) {
		t.Error("the server did not see notifications/cancelled")
	}
}

// TestListChanged: a tool the server adds is offered from the next Tools
// call on.
func TestListChanged(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, _ := fake(t)
	l := lease(t, m, srv)
	if _, changed := l.Tools(t.Context()); !changed {
		t.Error("first Tools call not a change")
	}
	if _, changed := l.Tools(t.Context()); changed {
		t.Error("second Tools call changed without a cause")
	}
	if _, res := call(t, registry(t, l), "mcp__fake__add_tool", `{"name":"late"}`); !res.Success {
		t.Fatal(res)
	}
	var r *tool.Registry
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r = registry(t, l)
		if _, ok := r.Get("mcp__fake__late"); ok || time.Now().After(deadline) {
			break
		}
	}
	if _, res := call(t, r, "mcp__fake__late", `{}`); !res.Success || res.Output != "added tool ran" {
		t.Errorf("added tool: %+v (tools %v)", res, r.Names())
	}
}

func TestToolFilters(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, _ := fake(t)
	srv.Tools = []string{"echo", "add", "crash"}
	srv.DisabledTools = []string{"crash"}
	l := lease(t, m, srv)
	if diff := cmp.Diff([]string{"mcp__fake__add", "mcp__fake__echo"}, registry(t, l).Names()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestProgress: progress the server reports reaches the call's Progress.
func TestProgress(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, _ := fake(t)
	l := lease(t, m, srv)
	var got []string
	env := tool.Env{Progress: func(s string) { got = append(got, s) }}
	p, res, ok := registry(t, l).Prepare(env, "mcp__fake__slow", json.RawMessage(`{"steps":3}`))
	if !ok {
		t.Fatal(res)
	}
	if res := p.Run(t.Context()); !res.Success {
		t.Fatal(res)
	}
	if len(got) == 0 || got[len(got)-1] != "progress 3/3: step" {
		t.Errorf("progress = %q", got)
	}
}

// TestEnvironmentAndDir: a stdio server gets exactly the environment it is
// given (plus its tag) and runs in its directory.
func TestEnvironmentAndDir(t *testing.T) {
	m, _ := newManager(t, nil)
	srv, dir := fake(t, "ONLY_THIS=1")
	l := lease(t, m, srv)
	_, res := call(t, registry(t, l), "mcp__fake__pid", `{}`)
	var out struct {
		Env []string
		Cwd string
	}
	if err := json.Unmarshal([]byte(res.Output), &out); err != nil {
		t.Fatal(res.Output)
	}
	slices.Sort(out.Env)
	want := []string{"ONLY_THIS", "PATH", mcptest.EnvDir, mcptest.EnvServe, TagKey}
	slices.Sort(want)
	if diff := cmp.Diff(want, out.Env); diff != "" {
		t.Errorf("environment names (-want +got):\n%s", diff)
	}
	if out.Cwd != dir {
		t.Errorf("cwd = %q, want %q", out.Cwd, dir)
	}
}
