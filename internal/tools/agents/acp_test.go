package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// acpInstallHint is what to run when the real ACP adapters are missing.
const acpInstallHint = "run .ci/npm-install internal/tools/agents/acpclient/testdata/npm (.ci/run does) to install them into .cache/acpclient-npm"

// requireACPAdapter finds the installed adapter bin (claude-agent-acp or
// codex-acp): the test skips without Node.js, fails when the locked
// packages are not installed, and skips when the adapter cannot run here.
func requireACPAdapter(t testing.TB, bin string) string {
	t.Helper()
	_, _, dest := mcptest.RequireLockedInstall(t, "internal/tools/agents/acpclient/testdata/npm", ".cache/acpclient-npm",
		"the tests with the real ACP adapters", "the ACP adapter packages", acpInstallHint)
	p := filepath.Join(dest, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s cannot run here (%v): skipping the test with the real adapter", bin, err)
	}
	return p
}

// acpScript answers the agent loop's requests (those offering tools) with
// the queued steps in order and every other request (title generation,
// probes) with a short text.
type acpScript struct {
	mu     sync.Mutex
	queue  [][]modeltest.Step
	bodies []string
}

func (s *acpScript) respond(path string, raw []byte) []modeltest.Step {
	var body struct {
		Tools []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(body.Tools) == 0 || len(s.queue) == 0 {
		return []modeltest.Step{modeltest.Text("ok")}
	}
	s.bodies = append(s.bodies, string(raw))
	steps := s.queue[0]
	s.queue = s.queue[1:]
	return steps
}

func (s *acpScript) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		return ""
	}
	return s.bodies[len(s.bodies)-1]
}

type askRecord struct {
	summary string
	risk    tool.Risk
}

// acpCase is what differs between the adapters.
type acpCase struct {
	agent, bin string
	// setup configures the adapter's private home for the fake server.
	setup func(t *testing.T, home, url string)
	// write is a model step creating path; long one running command.
	write func(id, path string) modeltest.Step
	long  func(id, command string) modeltest.Step
	// risk is the risk of write's permission request.
	risk tool.Risk
	// denyEndsTurn says a refused step ends the agent's turn (Codex
	// offers only "abort" as its refusal), so no model request follows.
	denyEndsTurn bool
	// neverAsks says the agent runs its tools unasked (pi has no
	// permission step; pi-acp asks only for an extension's dialogs), so
	// the write is made without a nested approval and nothing is denied.
	neverAsks bool
	// cliOnPath says the adapter runs its CLI from the search path
	// (pi-acp starts `pi --mode rpc`), so the test puts the installed
	// bin directory on the adapter's PATH.
	cliOnPath bool
}

var acpCases = []acpCase{
	{
		agent: "codex", bin: "codex-acp",
		setup: func(t *testing.T, home, url string) {
			writeFile(t, filepath.Join(home, "config.toml"), "model = \"gpt-5\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \""+url+"/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_KEY\"\n")
		},
		write: func(id, path string) modeltest.Step {
			return codexExec(id, "echo made > "+path)
		},
		long: codexExec,
		risk: tool.Process, denyEndsTurn: true,
	},
	{
		agent: "claude", bin: "claude-agent-acp",
		setup: func(t *testing.T, home, url string) {
			b, _ := json.Marshal(map[string]any{"env": map[string]string{"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-fake"}})
			writeFile(t, filepath.Join(home, ".claude", "settings.json"), string(b))
		},
		write: func(id, path string) modeltest.Step {
			args, _ := json.Marshal(map[string]string{"file_path": path, "content": "made\n"})
			return modeltest.ToolCall(id, "Write", string(args))
		},
		long: func(id, command string) modeltest.Step {
			args, _ := json.Marshal(map[string]any{"command": command, "timeout": 600000})
			return modeltest.ToolCall(id, "Bash", string(args))
		},
		risk: tool.Filesystem,
	},
	{
		agent: "pi", bin: "pi-acp",
		setup: func(t *testing.T, home, url string) {
			dir := filepath.Join(home, ".pi", "agent")
			models, _ := json.Marshal(map[string]any{"providers": map[string]any{"scv": map[string]any{
				"baseUrl": url + "/v1", "api": "openai-responses", "apiKey": "SCV_KEY_IS_IN_AUTH_JSON",
				"models": []any{map[string]any{"id": "gpt-5"}},
			}}})
			writeFile(t, filepath.Join(dir, "models.json"), string(models))
			writeFile(t, filepath.Join(dir, "auth.json"), `{"scv":{"type":"api_key","key":"sk-fake"}}`)
			writeFile(t, filepath.Join(dir, "settings.json"), `{"defaultProvider":"scv","defaultModel":"gpt-5","quietStartup":true}`)
		},
		write: func(id, path string) modeltest.Step {
			args, _ := json.Marshal(map[string]string{"path": path, "content": "made\n"})
			return modeltest.ToolCall(id, "write", string(args))
		},
		long: func(id, command string) modeltest.Step {
			args, _ := json.Marshal(map[string]any{"command": command})
			return modeltest.ToolCall(id, "bash", string(args))
		},
		neverAsks: true, cliOnPath: true,
	},
}

func codexExec(id, command string) modeltest.Step {
	args, _ := json.Marshal(map[string]string{"cmd": command, "sandbox_permissions": "require_escalated", "justification": "the task needs it"})
	return modeltest.ToolCall(id, "exec_command", string(args))
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestACPTransport drives the real claude-agent-acp, codex-acp and pi-acp
// against the fake model server through one conversation: a permission
// request relayed and approved (the file is made) with the reply, a
// follow-up on the same conversation whose request is denied (no file),
// a long command cancelled mid-run (no survivor, no adapter left running),
// then one more call that reopens the conversation in a new adapter. pi
// never asks: its write is made with no nested approval and its follow-up
// is a plain reply.
func TestACPTransport(t *testing.T) {
	for _, tc := range acpCases {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			testACPConversation(t, tc)
		})
	}
}

func testACPConversation(t *testing.T, tc acpCase) {
	bin := requireACPAdapter(t, tc.bin)
	script := &acpScript{}
	fake := modeltest.New(t)
	fake.Respond = script.respond
	f := newFixture(t, tc.agent, "FAKE_MODEL_KEY=sk-fake")
	if tc.cliOnPath {
		for i, kv := range f.opts.Env {
			if strings.HasPrefix(kv, "PATH=") {
				f.opts.Env[i] = "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
			}
		}
		// pi-acp asks the registry for a newer pi at each session/new
		// (`npm view`, 800 ms at most): offline, it fails at once.
		f.opts.Env = append(f.opts.Env, "npm_config_offline=true")
	}
	f.opts.Overrides = map[string]Override{tc.agent: {Command: bin, Transport: TransportACP}}
	f.opts.MaxTimeout = 600 * time.Second
	tc.setup(t, f.opts.Layout.Adapter(tc.agent), fake.URL())
	pool := NewACPPool(4, 0)
	f.opts.ACP = pool
	defer pool.Close()
	approved, denied := filepath.Join(f.workspace, "approved.txt"), filepath.Join(f.workspace, "denied.txt")
	pidFile := filepath.Join(f.workspace, "sleep.pid")
	script.queue = [][]modeltest.Step{{tc.write("t1", approved)}, {modeltest.Text("made it")}, {tc.write("t2", denied)}}
	if tc.neverAsks {
		script.queue[2] = []modeltest.Step{modeltest.Text("still here")}
	} else if !tc.denyEndsTurn {
		script.queue = append(script.queue, []modeltest.Step{modeltest.Text("was refused")})
	}
	script.queue = append(script.queue, []modeltest.Step{tc.long("t3", "sleep 300 & echo $! > "+pidFile+"; wait")}, []modeltest.Step{modeltest.Text("back again")})
	tl := f.tool(t, tc.agent)
	var mu sync.Mutex
	var asks []askRecord
	allow := true
	env := f.env()
	env.OutputLimit = 16000
	env.Ask = func(_ context.Context, step tool.Plan) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		asks = append(asks, askRecord{step.Summary, step.Risk})
		if allow {
			return true, ""
		}
		return false, "denied: the user did not approve this agent_" + tc.agent + " call"
	}
	call := func(ctx context.Context, args map[string]any) Result {
		t.Helper()
		b, _ := json.Marshal(args)
		plan, err := tl.Plan(env, b)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if !strings.Contains(plan.Summary, "Transport: acp") {
			t.Errorf("the approval summary does not name the transport:\n%s", plan.Summary)
		}
		var r Result
		if err := json.Unmarshal([]byte(plan.Run(ctx).Output), &r); err != nil {
			t.Fatalf("result: %v", err)
		}
		return r
	}

	r1 := call(t.Context(), map[string]any{"prompt": "make approved.txt"})
	if r1.Status != StatusCompleted || !strings.Contains(r1.Reply, "made it") || r1.Session == "" || r1.Turn != 1 {
		t.Fatalf("first call: %+v", r1)
	}
	if _, err := os.Stat(approved); err != nil {
		t.Errorf("the approved step did not make its file: %v", err)
	}
	mu.Lock()
	switch {
	case tc.neverAsks && len(asks) != 0:
		t.Errorf("asks after the first call: %+v (want none: the agent has no permission step)", asks)
	case !tc.neverAsks && (len(asks) != 1 || !strings.HasPrefix(asks[0].summary, "["+r1.Session+"] ") || asks[0].risk != tc.risk):
		t.Errorf("asks after the first call: %+v (want one, risk %s)", asks, tc.risk)
	}
	allow = false
	mu.Unlock()
	if pool.Len() != 1 {
		t.Errorf("%d adapters running after the first call, want 1 kept for the conversation", pool.Len())
	}

	r2 := call(t.Context(), map[string]any{"prompt": "make denied.txt", "session": r1.Session})
	if r2.Session != r1.Session || r2.Turn != 2 || r2.Status != StatusCompleted {
		t.Errorf("follow-up call: %+v", r2)
	}
	if tc.neverAsks && (!strings.Contains(r2.Reply, "still here") || r2.Hint != "") {
		t.Errorf("follow-up call without a step: %+v", r2)
	} else if !tc.neverAsks && !strings.Contains(r2.Hint, "refused") {
		t.Errorf("follow-up call's hint does not name the refused step: %+v", r2)
	}
	if _, err := os.Stat(denied); err == nil {
		t.Error("the denied step made its file")
	}
	if !strings.Contains(script.last(), "make approved.txt") {
		t.Error("the follow-up's model request does not carry the conversation's first prompt")
	}

	mu.Lock()
	allow = true
	mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r3 := call(ctx, map[string]any{"prompt": "sleep a while", "session": r1.Session})
	cancel()
	if r3.Status != StatusCancelled {
		t.Errorf("cancelled call: %+v", r3)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the long command never started: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	testutil.KillAtCleanup(t, pid)
	if pid <= 0 || testutil.Running(pid) {
		t.Errorf("the long command (pid %d) survived the cancel", pid)
	}
	if pool.Len() != 0 {
		t.Errorf("%d adapters running after the cancel, want 0", pool.Len())
	}

	r4 := call(t.Context(), map[string]any{"prompt": "are you back", "session": r1.Session})
	if r4.Session != r1.Session || r4.Status != StatusCompleted || !strings.Contains(r4.Reply, "back again") {
		t.Errorf("call after the cancel: %+v", r4)
	}
	if !strings.Contains(script.last(), "make approved.txt") {
		t.Error("the reloaded conversation's model request does not carry its first prompt")
	}
}

// TestACPSignedOut: codex-acp with no key in its private home refuses the
// session; the result says so with the `scv agents login` hint.
func TestACPSignedOut(t *testing.T) {
	t.Parallel()
	bin := requireACPAdapter(t, "codex-acp")
	f := newFixture(t, "codex")
	f.opts.Overrides = map[string]Override{"codex": {Command: bin, Transport: TransportACP}}
	pool := NewACPPool(1, 0)
	f.opts.ACP = pool
	defer pool.Close()
	res, r := f.run(t, "codex", map[string]any{"prompt": "hello"})
	if res.Success || r.Status != StatusFailed || !strings.Contains(r.Hint, "scv agents login codex") {
		t.Errorf("signed-out run: %+v", r)
	}
	if pool.Len() != 0 {
		t.Errorf("%d adapters left running", pool.Len())
	}
}
