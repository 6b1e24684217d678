package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// fakeACPCommand makes the test binary a minimal ACP agent (see
// fakeACPAgent) when it is its first argument.
const fakeACPCommand = "fake-acp-agent"

// fakeACPAgent is a minimal ACP agent on stdin/stdout: initialize,
// session/new (ids s1, s2, …), session/load, and session/prompt, which
// first asks the client to read a file (fs/read_text_file, expecting
// "method not found") and replies with the prompt's text. Every method
// it receives is appended to $FAKEACP_LOG with its pid.
func fakeACPAgent() int {
	logf, _ := os.OpenFile(os.Getenv("FAKEACP_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	sessions := 0
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" {
			if m.Error != nil {
				fmt.Fprintf(logf, "%d reply-error %d\n", os.Getpid(), m.Error.Code)
			}
			continue
		}
		fmt.Fprintf(logf, "%d %s\n", os.Getpid(), m.Method)
		reply := func(v any) { _ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": v}) }
		switch m.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}})
		case "session/new":
			sessions++
			reply(map[string]any{"sessionId": "s" + strconv.Itoa(sessions)})
		case "session/load":
			reply(map[string]any{})
		case "session/prompt":
			var p struct {
				SessionID string `json:"sessionId"`
				Prompt    []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			}
			_ = json.Unmarshal(m.Params, &p)
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": "fs1", "method": "fs/read_text_file", "params": map[string]any{"sessionId": p.SessionID, "path": "/etc/hostname"}})
			text := ""
			if len(p.Prompt) > 0 {
				text = p.Prompt[0].Text
			}
			if strings.HasPrefix(text, "ask ") { // ask the client's permission first, reply with its answer
				text = askPermission(out, in, logf, p.SessionID, strings.TrimPrefix(text, "ask "))
			}
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": p.SessionID,
				"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "echo " + p.SessionID + ": " + text}}}})
			reply(map[string]any{"stopReason": "end_turn", "usage": map[string]any{"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}})
		}
	}
	return 0
}

// askPermission sends session/request_permission for an execute step of
// command and returns the option the client chose (the answer to fs1 on
// the way is skipped).
func askPermission(out *json.Encoder, in *bufio.Scanner, logf *os.File, session, command string) string {
	_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": "perm1", "method": "session/request_permission", "params": map[string]any{
		"sessionId": session,
		"toolCall":  map[string]any{"toolCallId": "tc1", "title": command, "kind": "execute", "rawInput": map[string]any{"command": command}},
		"options":   []map[string]any{{"optionId": "yes", "name": "Allow", "kind": "allow_once"}, {"optionId": "no", "name": "Reject", "kind": "reject_once"}},
	}})
	for in.Scan() {
		var r struct {
			ID     string `json:"id"`
			Result struct {
				Outcome struct {
					Outcome  string `json:"outcome"`
					OptionID string `json:"optionId"`
				} `json:"outcome"`
			} `json:"result"`
		}
		if json.Unmarshal(in.Bytes(), &r) == nil && r.ID == "perm1" {
			fmt.Fprintf(logf, "%d permission %s\n", os.Getpid(), r.Result.Outcome.OptionID)
			return "chose " + r.Result.Outcome.OptionID
		}
	}
	return "no answer"
}

// fakeACPFixture runs agent_codex over the fake ACP agent.
func fakeACPFixture(t *testing.T, idle time.Duration) (*fixture, string) {
	t.Helper()
	f := newFixture(t, "codex")
	log := filepath.Join(f.out, "acp.log")
	f.opts.Env = append(f.opts.Env, "FAKEACP_LOG="+log)
	f.opts.Overrides = map[string]Override{"codex": {Command: os.Args[0], Args: []string{fakeACPCommand}, Transport: TransportACP}}
	f.opts.ACP = NewACPPool(2, idle)
	t.Cleanup(f.opts.ACP.Close)
	return f, log
}

func acpLog(t *testing.T, path string) (pids map[string]bool, methods []string) {
	t.Helper()
	b, _ := os.ReadFile(path)
	pids = map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, method, _ := strings.Cut(line, " ")
		pids[pid] = true
		methods = append(methods, method)
	}
	// The answer to the last prompt's fs request may reach the agent after
	// the call returned: it is left out.
	if n := len(methods); n > 0 && methods[n-1] == "reply-error -32601" {
		methods = methods[:n-1]
	}
	return pids, methods
}

func (f *fixture) runOn(t *testing.T, tl tool.Tool, args map[string]any) Result {
	t.Helper()
	b, _ := json.Marshal(args)
	p, err := tl.Plan(f.env(), b)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal([]byte(p.Run(t.Context()).Output), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestACPFakeAgent: without Node.js too, the transport's protocol and its
// pool: a reply with usage, fs/* answered "method not found", a follow-up
// on the running adapter, and once that adapter is gone a follow-up that
// starts a new one and reloads the conversation.
func TestACPFakeAgent(t *testing.T) {
	f, log := fakeACPFixture(t, 0)
	tl := f.tool(t, "codex")
	r1 := f.runOn(t, tl, map[string]any{"prompt": "one"})
	if r1.Status != StatusCompleted || r1.Reply != "echo s1: one" || r1.Usage == nil || r1.Usage.InputTokens != 3 || r1.Session == "" || r1.Turn != 1 {
		t.Fatalf("first call: %+v", r1)
	}
	r2 := f.runOn(t, tl, map[string]any{"prompt": "two", "session": r1.Session})
	if r2.Status != StatusCompleted || r2.Reply != "echo s1: two" || r2.Session != r1.Session || r2.Turn != 2 {
		t.Fatalf("follow-up: %+v", r2)
	}
	pids, methods := acpLog(t, log)
	want := "initialize,session/new,session/prompt,reply-error -32601,session/prompt"
	if strings.Join(methods, ",") != want || len(pids) != 1 {
		t.Errorf("the agent saw %v from %d processes, want %s from one", methods, len(pids), want)
	}
	// The adapter goes (as after a restart); the next call reloads s1.
	l := f.opts.ACP.take("sess1", r1.Session)
	if l == nil {
		t.Fatal("no adapter kept for the conversation")
	}
	l.stop()
	r3 := f.runOn(t, tl, map[string]any{"prompt": "three", "session": r1.Session})
	if r3.Status != StatusCompleted || r3.Reply != "echo s1: three" || r3.Turn != 3 {
		t.Fatalf("follow-up after the adapter stopped: %+v", r3)
	}
	pids, methods = acpLog(t, log)
	if len(pids) != 2 || !strings.HasSuffix(strings.Join(methods, ","), "reply-error -32601,initialize,session/load,session/prompt") {
		t.Errorf("after the adapter stopped the agent saw %v from %d processes", methods, len(pids))
	}
}

// TestACPIdleAdapterStops: an adapter unused for the pool's idle time is
// stopped.
func TestACPIdleAdapterStops(t *testing.T) {
	f, log := fakeACPFixture(t, 200*time.Millisecond)
	if r := f.runOn(t, f.tool(t, "codex"), map[string]any{"prompt": "one"}); r.Status != StatusCompleted {
		t.Fatalf("call: %+v", r)
	}
	pids, _ := acpLog(t, log)
	for p := range pids {
		pid, _ := strconv.Atoi(p)
		if pid <= 0 || !testutil.WaitGone(20*time.Second, pid) {
			t.Errorf("the idle adapter (pid %d) still runs", pid)
		}
	}
	if n := f.opts.ACP.Len(); n != 0 {
		t.Errorf("%d adapters in the pool after the idle time", n)
	}
}

// A background job over the ACP transport has no one to ask: the step the
// agent asks permission for goes by the policy alone (tool.Env.AskAlone,
// never the call's approval door), and the job's result says which step
// was refused and why; without that door every step is refused.
func TestACPBackgroundJobSteps(t *testing.T) {
	tests := []struct {
		name      string
		alone     func(context.Context, tool.Plan) (bool, string)
		reply     string
		hint      string
		permitted string
	}{
		{"the policy allows", func(context.Context, tool.Plan) (bool, string) { return true, "" }, "echo s1: chose yes", "", "permission yes"},
		{"the policy would ask", func(context.Context, tool.Plan) (bool, string) { return false, "denied: no one can be asked" }, "echo s1: chose no",
			"rm -rf build (execute): denied: no one can be asked", "permission no"},
		{"no door", nil, "echo s1: chose no", "rm -rf build (execute): refused: no one can approve a step of a background job", "permission no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, log := fakeACPFixture(t, 0)
			f.opts.Jobs = jobs.New(jobs.Options{MaxPerSession: 2})
			t.Cleanup(f.opts.Jobs.Close)
			asked := 0
			env := f.env()
			env.Ask = func(context.Context, tool.Plan) (bool, string) { asked++; return true, "" }
			env.AskAlone = tt.alone
			b, _ := json.Marshal(map[string]any{"prompt": "ask rm -rf build", "background": true})
			p, err := f.tool(t, "codex").Plan(env, b)
			if err != nil {
				t.Fatal(err)
			}
			if res := p.Run(t.Context()); !res.Success || !strings.Contains(res.Output, `"job":"job-1"`) {
				t.Fatalf("background call: %+v", res)
			}
			info, err := f.opts.Jobs.Wait(t.Context(), env.SessionID, "job-1")
			if err != nil {
				t.Fatal(err)
			}
			var r Result
			if err := json.Unmarshal(info.Result, &r); err != nil {
				t.Fatalf("job result %s: %v", info.Result, err)
			}
			if r.Reply != tt.reply || !strings.Contains(r.Hint, tt.hint) || (tt.hint == "") != (r.Hint == "") {
				t.Errorf("job result: reply %q, hint %q; want %q, a hint holding %q", r.Reply, r.Hint, tt.reply, tt.hint)
			}
			if asked != 0 {
				t.Errorf("the call's approval door was asked %d times after the call returned", asked)
			}
			if _, methods := acpLog(t, log); !strings.Contains(strings.Join(methods, ","), tt.permitted) {
				t.Errorf("the agent saw %v, want %q", methods, tt.permitted)
			}
		})
	}
}
