package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

type fixture struct {
	app  *App
	home string
	user string
	ws   string
	fake *modeltest.Server
}

func newFixture(t *testing.T, cfg string) fixture {
	t.Helper()
	fake := modeltest.New(t)
	home, user := t.TempDir(), t.TempDir()
	ws := testutil.TempDir(t)
	full := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n%s", fake.URL(), cfg)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	layout := paths.Layout{Home: home}
	tr, err := delegation.New(delegation.Options{Dir: layout.Delegations()})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "HOME": user, "PATH": "/usr/bin:/bin", "BRAVE_SEARCH_API_KEY": "bk"}
	return fixture{app: New(Options{Layout: layout, Env: env, Tracker: tr}), home: home, user: user, ws: ws, fake: fake}
}

// tools is the toolset a session in the fixture's workspace gets.
func (f fixture) tools(t *testing.T, depth int, noTools bool) Toolset {
	t.Helper()
	l, err := f.app.LoadConfig(f.ws, NoOverrides)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := f.app.Tools(&l.Config, f.ws, depth, noTools)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func (f fixture) names(t *testing.T, depth int, noTools bool) ([]string, bool) {
	t.Helper()
	ts := f.tools(t, depth, noTools)
	return ts.Registry.Names(), ts.HostedSearch
}

// installCodex puts a codex executable in the user's ~/.local/bin, so an
// agent_codex tool is offered.
func (f fixture) installCodex(t *testing.T) {
	t.Helper()
	bin := filepath.Join(f.user, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// runTurn starts session s1 (tool-free when noTools) and runs one turn of
// prompt in it, passing its events to onEvent; the session's info is
// closed when it returns.
func (f fixture) runTurn(t *testing.T, noTools bool, prompt string, onEvent func(proto.TurnEvent)) server.SessionInfo {
	t.Helper()
	f.fake.Script(modeltest.Text("ok"))
	sess, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, NoTools: noTools}})
	if err != nil {
		t.Fatal(err)
	}
	sess.RunTurn(t.Context(), "t1", prompt, onEvent)
	info.Close()
	return info
}

func TestToolsPerConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     string
		depth   int
		noTools bool
		codex   bool // a codex executable in ~/.local/bin
		want    []string
		hosted  bool
	}{
		{"defaults", "", 0, false, false, []string{"bash", "read", "todo_write", "web_fetch", "write"}, false},
		{"web off", "[web]\nenabled = false\n", 0, false, false, []string{"bash", "read", "todo_write", "write"}, false},
		{"searxng", "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:9\"\n", 0, false, false, []string{"bash", "read", "todo_write", "web_fetch", "web_search", "write"}, false},
		{"brave", "[web]\nsearch = \"brave\"\n", 0, false, false, []string{"bash", "read", "todo_write", "web_fetch", "web_search", "write"}, false},
		{"provider search", "[web]\nsearch = \"provider\"\n", 0, false, false, []string{"bash", "read", "todo_write", "web_fetch", "write"}, true},
		{"no tools", "[web]\nsearch = \"provider\"\n", 0, true, true, []string{}, false},
		{"agent offered", "", 0, false, true, []string{"agent_codex", "bash", "read", "todo_write", "web_fetch", "write"}, false},
		{"agent at max depth", "", 2, false, true, []string{"bash", "read", "todo_write", "web_fetch", "write"}, false},
		{"delegation disabled", "[agent]\nmax_delegation_depth = 0\n", 0, false, true, []string{"bash", "read", "todo_write", "web_fetch", "write"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			if tt.codex {
				f.installCodex(t)
			}
			got, hosted := f.names(t, tt.depth, tt.noTools)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("tools (-want +got):\n%s", d)
			}
			if hosted != tt.hosted {
				t.Fatalf("hosted search = %v, want %v", hosted, tt.hosted)
			}
		})
	}
}

// Every built-in tool states its risk class for `scv tools list`, so none
// is listed with the fallback "per call".
// TestToolsWithJobs: where background jobs exist (the daemon) an offered
// agent brings agent_status, agent_wait and agent_cancel; without an
// agent they are not offered.
func TestToolsWithJobs(t *testing.T) {
	for _, codex := range []bool{false, true} {
		f := newFixture(t, "")
		f.app.jobs = jobs.New(jobs.Options{})
		if codex {
			f.installCodex(t)
		}
		got, _ := f.names(t, 0, false)
		want := []string{"bash", "read", "todo_write", "web_fetch", "write"}
		if codex {
			want = []string{"agent_cancel", "agent_codex", "agent_status", "agent_wait", "bash", "read", "todo_write", "web_fetch", "write"}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("codex %v: tools (-want +got):\n%s", codex, d)
		}
	}
}

func TestToolsDeclareRiskClass(t *testing.T) {
	f := newFixture(t, "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:9\"\n")
	f.installCodex(t)
	testutil.WriteFile(t, filepath.Join(f.ws, ".scv", "skills", "notes", "SKILL.md"), "Take notes.\n")
	// As in the daemon, which has background jobs.
	f.app.jobs = jobs.New(jobs.Options{})
	got := map[string]string{}
	for _, tl := range f.tools(t, 0, false).Registry.Tools() {
		got[tl.Name()] = tool.RiskClassOf(tl)
	}
	want := map[string]string{
		"todo_write":  "read_only",
		"read":        "read_only (filesystem for secret-like paths)",
		"write":       "filesystem",
		"bash":        "process",
		"web_fetch":   "network (read_only for allowlisted HTTPS hosts)",
		"web_search":  "read_only",
		"read_skill":  "read_only",
		"agent_codex": "delegate",
		// The background jobs' tools (the daemon's only).
		"agent_status": "read_only",
		"agent_wait":   "read_only",
		"agent_cancel": "process",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("risk classes (-want +got):\n%s", d)
	}
}

// The system prompt carries the workspace, AGENTS.md and the skill list;
// a tool-free session gets no tools, no skills and no hosted search.
func TestSessionPromptAndToolFree(t *testing.T) {
	f := newFixture(t, "[web]\nsearch = \"provider\"\n")
	testutil.Files(t, f.ws, map[string]string{
		"AGENTS.md":                           "Always run make lint.\n",
		".scv/skills/release-checks/SKILL.md": "---\ndescription: Checks before a release.\n---\nSteps.\n",
	})
	testutil.WriteFile(t, filepath.Join(f.home, "AGENTS.md"), "Answer tersely.\n")
	for _, noTools := range []bool{false, true} {
		var last proto.TurnEvent
		info := f.runTurn(t, noTools, "hi", func(e proto.TurnEvent) { last = e })
		if _, ok := last.(*proto.TurnCompleted); !ok {
			t.Fatalf("turn ended with %+v", last)
		}
		reqs := f.fake.Requests()
		req := reqs[len(reqs)-1]
		instr, _ := req.Body["instructions"].(string)
		if !strings.Contains(instr, "Workspace: "+f.ws) || !strings.Contains(instr, "Always run make lint.") || !strings.Contains(instr, "Answer tersely.") {
			t.Fatalf("instructions lack workspace, the workspace's or the user's AGENTS.md:\n%s", instr)
		}
		hasSkill := strings.Contains(instr, "release-checks")
		switch noTools {
		case false:
			if !hasSkill || !req.HasHostedWebSearch() || !slices.Contains(info.Tools, "read_skill") {
				t.Fatalf("tool session: skill listed %v, hosted %v, tools %v", hasSkill, req.HasHostedWebSearch(), info.Tools)
			}
		case true:
			if hasSkill || req.HasHostedWebSearch() || len(req.ToolNames()) != 0 || len(info.Tools) != 0 {
				t.Fatalf("tool-free session: skill listed %v, hosted %v, tools %v", hasSkill, req.HasHostedWebSearch(), req.ToolNames())
			}
		}
	}
}

// Session overrides pick another profile and model; an unknown profile is
// an error naming it.
func TestSessionOverrides(t *testing.T) {
	f := newFixture(t, "[providers.other]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"other-model\"\n")
	_, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, Model: "m-2"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Model != "m-2" {
		t.Fatalf("model = %q", info.Model)
	}
	_, info, err = f.app.NewSession(t.Context(), "s2", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, Provider: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Model != "other-model" {
		t.Fatalf("model = %q", info.Model)
	}
	if _, _, err := f.app.NewSession(t.Context(), "s3", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, Provider: "nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown provider: %v", err)
	}
	if f.app.Sessions() != 2 {
		t.Fatalf("sessions = %d", f.app.Sessions())
	}
}

// A missing key is an error naming the variable.
func TestMissingKey(t *testing.T) {
	f := newFixture(t, "")
	delete(f.app.opts.Env, "OPENAI_API_KEY")
	_, _, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

// The session's delegation depth is max(declared, own process depth):
// agent tools disappear at agent.max_delegation_depth either way.
func TestSessionDelegationDepth(t *testing.T) {
	tests := []struct {
		name     string
		declared int
		ownDepth string
		want     bool
	}{
		{"top level", 0, "", true},
		{"declared below max", 1, "", true},
		{"declared at max", 2, "", false},
		{"own process at max", 0, "2", false},
		{"own process below, declared at max", 2, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			f.installCodex(t)
			if tt.ownDepth != "" {
				f.app.opts.Env["SCV_DELEGATION_DEPTH"] = tt.ownDepth
			}
			_, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, DelegationDepth: tt.declared}})
			if err != nil {
				t.Fatal(err)
			}
			defer info.Close()
			if got := slices.Contains(info.Tools, "agent_codex"); got != tt.want {
				t.Fatalf("agent_codex offered = %v, want %v (tools %v)", got, tt.want, info.Tools)
			}
		})
	}
}

// tools.bash_login reaches the bash tool: the login shell by default,
// `bash -c` when the user config turns it off.
func TestBashLoginConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"", "`/bin/bash -lc`"},
		{"[tools]\nbash_login = false\n", "`/bin/bash -c`"},
	} {
		f := newFixture(t, tc.cfg)
		b, ok := f.tools(t, 0, false).Registry.Get("bash")
		if !ok || !strings.Contains(b.Description(), tc.want) {
			t.Errorf("config %q: bash description does not name %s", tc.cfg, tc.want)
		}
	}
}

// A prompt's @path mentions attach the file in a session with tools; a
// tool-free session (a remote chat sender's) sends them as text and reads
// nothing.
func TestMentionsOnlyWithTools(t *testing.T) {
	f := newFixture(t, "")
	testutil.WriteFile(t, filepath.Join(f.ws, "notes.txt"), "mention-content-13\n")
	for _, noTools := range []bool{false, true} {
		var started *proto.TurnStarted
		f.runTurn(t, noTools, "see @notes.txt", func(e proto.TurnEvent) {
			if s, ok := e.(*proto.TurnStarted); ok {
				started = s
			}
		})
		reqs := f.fake.Requests()
		attached := strings.Contains(string(reqs[len(reqs)-1].Raw), "mention-content-13")
		if attached == noTools || (len(started.Mentions) == 1) == noTools {
			t.Errorf("no_tools %v: content attached %v, mentions %+v", noTools, attached, started.Mentions)
		}
	}
}

// TestWarmBesideSessions: the catalogue decoded by Warm in the background
// while sessions start and describe their models is one decoding, shared
// without a race (run with -race), and Close waits for it.
func TestWarmBesideSessions(t *testing.T) {
	f := newFixture(t, "[providers.remote]\nbase_url = \"https://api.openai.com/v1\"\napi_key_env = \"OPENAI_API_KEY\"\n")
	loaded, err := f.app.LoadConfig(f.ws, NoOverrides)
	if err != nil {
		t.Fatal(err)
	}
	f.app.Warm(&loaded.Config)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			f.app.catalog.Lookup("https://api.openai.com/v1", "gpt-4.1", nil)
		})
	}
	wg.Wait()
	f.app.Close()
	if m, known := f.app.catalog.Lookup("https://api.openai.com/v1", "gpt-4.1", nil); !known || m.ContextWindow == 0 {
		t.Errorf("after Warm: %+v known=%v", m, known)
	}
}
