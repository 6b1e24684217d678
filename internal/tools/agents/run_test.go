package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/tool"
)

// fakeAgent is a fake agent CLI. Tests run it through /bin/bash (the
// [agents.<name>] command override), never executing a freshly written
// file. It records its argv, environment and directory, then replays a
// stream, writes the -o file, sleeps and exits as its FAKEAGENT_* variables
// say.
const fakeAgent = `d="$FAKEAGENT_DIR"
printf '%s\0' "$@" > "$d/argv"
cat /proc/$$/environ > "$d/env"
pwd -P > "$d/cwd"
if [ -n "$FAKEAGENT_STREAM" ]; then cat "$FAKEAGENT_STREAM"; fi
if [ -n "$FAKEAGENT_STDERR" ]; then printf '%s' "$FAKEAGENT_STDERR" >&2; fi
if [ -n "$FAKEAGENT_LASTMSG" ]; then
  prev=""
  for a in "$@"; do
    if [ "$prev" = "-o" ]; then printf '%s' "$FAKEAGENT_LASTMSG" > "$a"; printf '%s' "$a" > "$d/ofile"; fi
    prev="$a"
  done
fi
if [ -n "$FAKEAGENT_SLEEP" ]; then sleep "$FAKEAGENT_SLEEP"; fi
exit "${FAKEAGENT_EXIT:-0}"
`

type fixture struct {
	opts      Options
	workspace string
	out       string // where the fake writes argv/env/cwd
	script    string
}

func newFixture(t *testing.T, agent string, extraEnv ...string) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{workspace: filepath.Join(root, "ws"), out: filepath.Join(root, "out")}
	for _, d := range []string{f.workspace, f.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.script = filepath.Join(root, "fake-agent.sh")
	if err := os.WriteFile(f.script, []byte(fakeAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := delegation.New(delegation.Options{Dir: filepath.Join(root, "scv", "run", "delegations")})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + root,
		"ANTHROPIC_API_KEY=sk-ant-planted", "OPENAI_API_KEY=sk-planted", "OPENAI_BASE_URL=http://evil",
		"CODEX_HOME=/user/.codex", "CLAUDE_CODE_OAUTH_TOKEN=tok", "GROK_HOME=/user/.grok", "DSH_HOME=/x",
		"PI_CODING_AGENT_DIR=/user/.pi", "SCV_MODEL=m", "SCV_HOME=/elsewhere", "MY_API_KEY=k",
		"FAKEAGENT_DIR=" + f.out,
	}
	f.opts = Options{
		Layout:     paths.Layout{Home: filepath.Join(root, "scv")},
		UserHome:   filepath.Join(root, "nohome"),
		PathEnv:    "",
		Env:        append(env, extraEnv...),
		Overrides:  map[string]Override{agent: {Command: "/bin/bash", Args: []string{f.script}}},
		InstanceID: "inst", ParentChain: "up/s0/claude-000000", Depth: 0,
		MaxTimeout: 600 * time.Second, DefaultTimeout: 300 * time.Second,
		Tracker: tr,
	}
	return f
}

func (f *fixture) tool(t *testing.T, agent string) tool.Tool {
	t.Helper()
	for _, tl := range Available(f.opts) {
		if tl.Name() == "agent_"+agent {
			return tl
		}
	}
	t.Fatalf("agent_%s not offered", agent)
	return nil
}

func (f *fixture) env() tool.Env {
	return tool.Env{Workspace: f.workspace, SessionID: "sess1", CallID: "c1", OutputLimit: 1000}
}

func (f *fixture) call(t *testing.T, agent string, args any) (tool.Plan, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	return f.tool(t, agent).Plan(f.env(), b)
}

func (f *fixture) run(t *testing.T, agent string, args any) (tool.Result, Result) {
	t.Helper()
	p, err := f.call(t, agent, args)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	res := p.Run(t.Context())
	var r Result
	if err := json.Unmarshal([]byte(res.Output), &r); err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	return res, r
}

func (f *fixture) argv(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(f.out, "argv"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

func (f *fixture) childEnv(t *testing.T) map[string]string {
	b, err := os.ReadFile(filepath.Join(f.out, "env"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestRunArgvBoundaries(t *testing.T) {
	f := newFixture(t, "codex", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/codex/text/stdout.jsonl"))
	prompt := "fix it; rm -rf / $(whoami) `id` \"quoted\" 'single'\nnew line -x --flag"
	res, r := f.run(t, "codex", map[string]any{"prompt": prompt, "model": "gpt-5.1[1m]", "effort": "xhigh"})
	if !res.Success || r.Status != StatusCompleted || r.Reply != "Hello from the fake model." {
		t.Fatalf("result %+v / %s", res, res.Output)
	}
	got := f.argv(t)
	if len(got) > 2 && regexp.MustCompile(`/adapters/codex/tmp/codex-[0-9a-f]{6}/last-message\.txt$`).MatchString(got[2]) {
		got[2] = "OUTFILE"
	}
	want := []string{"--json", "-o", "OUTFILE", "-m", "gpt-5.1[1m]", "-c", `model_reasoning_effort="xhigh"`, prompt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
}

func TestRunBlankOptionalValues(t *testing.T) {
	f := newFixture(t, "pi", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/pi/text/stdout.jsonl"))
	_, r := f.run(t, "pi", map[string]any{"prompt": "hi", "model": " ", "effort": "", "cwd": ""})
	if r.Status != StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if diff := cmp.Diff([]string{"--mode", "json", "hi"}, f.argv(t)); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
}

func TestRunChildEnvironment(t *testing.T) {
	f := newFixture(t, "claude", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/claude/text/stdout.jsonl"))
	f.run(t, "claude", map[string]any{"prompt": "hi"})
	env := f.childEnv(t)
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME", "CLAUDE_CODE_OAUTH_TOKEN", "GROK_HOME", "DSH_HOME", "PI_CODING_AGENT_DIR", "SCV_MODEL", "MY_API_KEY", "IS_SANDBOX"} {
		if v, ok := env[k]; ok {
			t.Errorf("child inherited %s=%s", k, v)
		}
	}
	home := f.opts.Layout.Adapter("claude")
	want := map[string]string{
		"HOME": home, "SCV_HOME": f.opts.Layout.Home, "XDG_CONFIG_HOME": home + "/.config",
		"SCV_DELEGATION_DEPTH": "1", "PATH": os.Getenv("PATH"),
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("child %s = %q, want %q", k, env[k], v)
		}
	}
	if !regexp.MustCompile(`^up/s0/claude-000000,inst/sess1/claude-[0-9a-f]{6}$`).MatchString(env["SCV_PARENT"]) {
		t.Errorf("SCV_PARENT = %q", env["SCV_PARENT"])
	}
	st, err := os.Stat(home)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("adapter home mode: %v %v", st, err)
	}
	// Full permissions add IS_SANDBOX=1 for Claude Code.
	f.opts.Overrides["claude"] = Override{Command: "/bin/bash", Args: []string{f.script}, Permissions: "full"}
	p, err := f.call(t, "claude", map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Summary, "FULL PERMISSIONS") {
		t.Errorf("summary lacks FULL PERMISSIONS:\n%s", p.Summary)
	}
	// No session grant may ever cover an agent with its approvals off.
	if !p.NoGrant {
		t.Error("a full-permission agent's call may be allowed for the session")
	}
	p.Run(t.Context())
	if env := f.childEnv(t); env["IS_SANDBOX"] != "1" {
		t.Errorf("IS_SANDBOX = %q with full permissions", env["IS_SANDBOX"])
	}
}

func TestRunCwd(t *testing.T) {
	f := newFixture(t, "pi", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/pi/text/stdout.jsonl"))
	outside := t.TempDir()
	mk := func(p string) { os.MkdirAll(filepath.Join(f.workspace, p), 0o755) }
	mk("proj/sub")
	os.Symlink(outside, filepath.Join(f.workspace, "escape"))
	os.Symlink("proj", filepath.Join(f.workspace, "inside-link"))
	os.WriteFile(filepath.Join(f.workspace, "file"), nil, 0o644)
	tests := []struct {
		cwd, want string // want "" = refused
	}{
		{"", f.workspace},
		{"proj", f.workspace + "/proj"},
		{"proj/sub/..", f.workspace + "/proj"},
		{f.workspace + "/proj/sub", f.workspace + "/proj/sub"},
		{"inside-link", f.workspace + "/proj"},
		{"escape", ""},
		{"..", ""},
		{outside, ""},
		{"missing", ""},
		{"file", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cwd, func(t *testing.T) {
			os.Remove(filepath.Join(f.out, "cwd"))
			p, err := f.call(t, "pi", map[string]any{"prompt": "hi", "cwd": tt.cwd})
			if tt.want == "" {
				var te *tool.Error
				if err == nil || !errorsAs(err, &te) || te.Kind != tool.InvalidArguments {
					t.Fatalf("cwd %q: err = %v, want invalid_arguments", tt.cwd, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Summary, "Directory: "+tt.want+"\n") {
				t.Errorf("summary lacks directory %s:\n%s", tt.want, p.Summary)
			}
			p.Run(t.Context())
			b, _ := os.ReadFile(filepath.Join(f.out, "cwd"))
			if got := strings.TrimSpace(string(b)); got != tt.want {
				t.Errorf("ran in %q, want %q", got, tt.want)
			}
		})
	}
	// Resolved again at call time: a directory swapped for an escaping
	// symlink after approval fails without launching.
	p, err := f.call(t, "pi", map[string]any{"prompt": "hi", "cwd": "proj/sub"})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(f.workspace, "proj/sub"))
	os.Symlink(outside, filepath.Join(f.workspace, "proj/sub"))
	os.Remove(filepath.Join(f.out, "argv"))
	if res := p.Run(t.Context()); res.Success || res.Error != tool.InvalidArguments {
		t.Errorf("swapped cwd: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.out, "argv")); err == nil {
		t.Error("agent launched in an escaping directory")
	}
}

func TestPlanRefusals(t *testing.T) {
	f := newFixture(t, "dsh")
	tests := []struct {
		name string
		args map[string]any
	}{
		{"dash prompt", map[string]any{"prompt": "-rf"}},
		{"empty prompt", map[string]any{"prompt": "  "}},
		{"no prompt", map[string]any{}},
		{"timeout over ceiling", map[string]any{"prompt": "x", "timeout_seconds": 601}},
		{"zero timeout", map[string]any{"prompt": "x", "timeout_seconds": 0.5}},
		{"model on dsh", map[string]any{"prompt": "x", "model": "deepseek"}},
		{"extra flag", map[string]any{"prompt": "x", "args": []string{"--yolo"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.call(t, "dsh", tt.args)
			var te *tool.Error
			if !errorsAs(err, &te) || te.Kind != tool.InvalidArguments {
				t.Errorf("err = %v, want invalid_arguments", err)
			}
		})
	}
	// The ceiling itself is accepted and advertised.
	p, err := f.call(t, "dsh", map[string]any{"prompt": "x", "timeout_seconds": 600})
	if err != nil || !strings.Contains(p.Summary, "Timeout: 600s") || p.Risk != tool.Delegate {
		t.Errorf("plan at the ceiling: %v\n%s", err, p.Summary)
	}
	if !strings.Contains(string(f.tool(t, "dsh").Schema()), `"maximum":600`) {
		t.Errorf("schema does not advertise the ceiling: %s", f.tool(t, "dsh").Schema())
	}
}

func TestSchemaPerAdapter(t *testing.T) {
	f := newFixture(t, "claude")
	for _, name := range Names() {
		f.opts.Overrides[name] = Override{Command: "/bin/bash", Args: []string{f.script}}
	}
	f.opts.Overrides["pi"] = Override{Command: "/bin/bash", Args: []string{f.script}, EffortArgs: []string{}}
	got := map[string][]string{}
	for _, tl := range Available(f.opts) {
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		json.Unmarshal(tl.Schema(), &s)
		var props []string
		for k := range s.Properties {
			props = append(props, k)
		}
		slices.Sort(props)
		got[tl.Name()] = props
		if m, ok := s.Properties["model"]; ok && !strings.Contains(m.Description, "only when the user asks") {
			t.Errorf("%s model description: %q", tl.Name(), m.Description)
		}
		if diff := cmp.Diff([]string{"prompt"}, s.Required); diff != "" {
			t.Errorf("%s required: %s", tl.Name(), diff)
		}
	}
	// Every agent takes `session`: those that cannot resume refuse it
	// with a clear error rather than an unknown-field one.
	all := []string{"cwd", "effort", "model", "prompt", "session", "timeout_seconds"}
	want := map[string][]string{
		"agent_claude": all, "agent_codex": all, "agent_grok": all,
		"agent_dsh": {"cwd", "prompt", "session", "timeout_seconds"},
		"agent_pi":  {"cwd", "model", "prompt", "session", "timeout_seconds"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
}

func TestUninstalledAgentsNotOffered(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, ".local", "bin")
	os.MkdirAll(bin, 0o755)
	// Written but never executed: only resolution is tested.
	os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/false\n"), 0o755)
	os.MkdirAll(filepath.Join(home, ".grok", "bin"), 0o755)
	os.WriteFile(filepath.Join(home, ".grok", "bin", "grok"), []byte("#!/bin/false\n"), 0o755)
	opts := Options{Layout: paths.Layout{Home: t.TempDir()}, UserHome: home, PathEnv: t.TempDir()}
	var names []string
	for _, tl := range Available(opts) {
		names = append(names, tl.Name())
	}
	if diff := cmp.Diff([]string{"agent_codex", "agent_grok"}, names); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
}

func TestRunSummary(t *testing.T) {
	f := newFixture(t, "grok")
	long := "do " + strings.Repeat("x", 5000)
	p, err := f.call(t, "grok", map[string]any{"prompt": long, "timeout_seconds": 42})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Executable: /bin/bash\n", `"-p" "do xxx`, "Prompt: do xxx", "more bytes]", "Directory: " + f.workspace, "Timeout: 42s", "Risk: delegate"} {
		if !strings.Contains(p.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, p.Summary)
		}
	}
	if strings.Contains(p.Summary, "FULL PERMISSIONS") || len(p.Summary) > 6000 {
		t.Errorf("summary unexpectedly long or full:\n%.300s", p.Summary)
	}
}

func TestRunPiErrorExitZero(t *testing.T) {
	f := newFixture(t, "pi", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/pi/badkey/stdout.jsonl"))
	res, r := f.run(t, "pi", map[string]any{"prompt": "hi"})
	if res.Success || res.Error != tool.Failed || r.Status != StatusFailed || *r.ExitCode != 0 || !strings.Contains(r.Hint, "scv agents login pi") {
		t.Errorf("pi provider error with exit 0: %+v %s", res, res.Output)
	}
}

func TestRunCodexOutputFileDeleted(t *testing.T) {
	f := newFixture(t, "codex", "FAKEAGENT_LASTMSG=final answer from -o")
	res, r := f.run(t, "codex", map[string]any{"prompt": "hi"})
	if !res.Success || r.Reply != "final answer from -o" {
		t.Fatalf("%+v", res)
	}
	ofile, err := os.ReadFile(filepath.Join(f.out, "ofile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(ofile), f.opts.Layout.Adapter("codex")+"/tmp/") {
		t.Errorf("-o file %s is not in the codex adapter's tmp", ofile)
	}
	if _, err := os.Stat(filepath.Dir(string(ofile))); !os.IsNotExist(err) {
		t.Errorf("-o directory not deleted: %v", err)
	}
}

func TestRunTimeoutAndKill(t *testing.T) {
	f := newFixture(t, "grok", "FAKEAGENT_SLEEP=30")
	start := time.Now()
	res, r := f.run(t, "grok", map[string]any{"prompt": "hi", "timeout_seconds": 1})
	if res.Error != tool.Limit || r.Status != StatusTimeout || r.ExitCode != nil {
		t.Errorf("timeout: %+v %s", res, res.Output)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("timed-out run took %v", el)
	}
	// scv agents kill from another tracker (as the CLI does) → cancelled.
	p, err := f.call(t, "grok", map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan tool.Result, 1)
	go func() { done <- p.Run(t.Context()) }()
	other, err := delegation.New(delegation.Options{Dir: f.opts.Tracker.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	var handle string
	deadline := time.Now().Add(5 * time.Second)
	for handle == "" && time.Now().Before(deadline) {
		list, _ := other.List(false)
		if len(list) == 1 {
			handle = list[0].Handle
			if list[0].Agent != "grok" || list[0].Session != "sess1" || list[0].Cwd != f.workspace || list[0].Depth != 1 || !list[0].AgentAlive {
				t.Errorf("record %+v", list[0])
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if handle == "" {
		t.Fatal("no record while running")
	}
	if err := other.Kill(t.Context(), handle); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		var r Result
		json.Unmarshal([]byte(res.Output), &r)
		if res.Error != tool.Cancelled || r.Status != StatusCancelled {
			t.Errorf("killed run: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("killed run did not return")
	}
	if list, _ := other.List(true); len(list) != 0 {
		t.Errorf("records left: %+v", list)
	}
	// Cancelling the context stops the run too.
	ctx, cancel := context.WithCancel(t.Context())
	p, _ = f.call(t, "grok", map[string]any{"prompt": "hi"})
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	if res := p.Run(ctx); res.Error != tool.Cancelled {
		t.Errorf("cancelled run: %+v", res)
	}
}

func errorsAs(err error, target **tool.Error) bool {
	te, ok := err.(*tool.Error)
	if ok {
		*target = te
	}
	return ok
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runProgress runs agent over its recorded stream (testdata/streams/
// <agent>/<stream>) and returns the progress lines the call reported and
// its result, which must be a success.
func runProgress(t *testing.T, agent, stream string) ([]string, tool.Result) {
	t.Helper()
	f := newFixture(t, agent, "FAKEAGENT_STREAM="+abs(t, "testdata/streams/"+agent+"/"+stream+"/stdout.jsonl"))
	var lines []string
	env := f.env()
	env.Progress = func(s string) { lines = append(lines, s) }
	p, err := f.tool(t, agent).Plan(env, json.RawMessage(`{"prompt":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run(t.Context())
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	return lines, res
}

func TestRunReportsProgress(t *testing.T) {
	lines, _ := runProgress(t, "pi", "text")
	// The start, then what the stream said (its one message's text).
	if len(lines) != 2 || !regexp.MustCompile(`^agent_pi started as pi-[0-9a-f]{6} \(pid \d+\)$`).MatchString(lines[0]) || lines[1] != "Hello from the fake model." {
		t.Errorf("progress %q", lines)
	}
}

// Prompt-flag placement and model/effort mapping through a real exec, per
// agent (the override's args replace only the fixed arguments).
func TestRunPromptPlacement(t *testing.T) {
	const prompt = "two words\tand a tab"
	tests := []struct {
		agent string
		args  map[string]any
		want  []string
	}{
		{"grok", map[string]any{"model": "grok-4", "effort": "low"}, []string{"-m", "grok-4", "--reasoning-effort", "low", "-p", prompt}},
		{"grok", nil, []string{"-p", prompt}},
		{"claude", map[string]any{"model": "sonnet", "effort": "max"}, []string{"--output-format", "stream-json", "--verbose", "--session-id", "UUID", "--model", "sonnet", "--effort", "max", prompt}},
		{"pi", map[string]any{"model": "scv/gpt-5.1", "effort": "medium"}, []string{"--mode", "json", "--model", "scv/gpt-5.1", "--thinking", "medium", prompt}},
		{"dsh", nil, []string{prompt}},
	}
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			f := newFixture(t, tt.agent)
			args := map[string]any{"prompt": prompt}
			for k, v := range tt.args {
				args[k] = v
			}
			f.run(t, tt.agent, args)
			got := f.argv(t)
			for i, s := range got {
				if uuidRE.MatchString(s) {
					got[i] = "UUID"
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultTimeoutApplied(t *testing.T) {
	f := newFixture(t, "pi")
	p, err := f.call(t, "pi", map[string]any{"prompt": "x"})
	if err != nil || !strings.Contains(p.Summary, "Timeout: 300s") {
		t.Errorf("default timeout: %v\n%s", err, p.Summary)
	}
}
