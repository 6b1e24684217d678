package agents

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/tool"
)

// convAgent is a fake Claude Code, Codex and pi that keeps conversations
// as the real ones do: it prints the session id of a new conversation (the
// one it was given, for Claude Code) or the resumed one, and replies with
// the turn it counts in a file per id. Each call's argv goes to argv.<n>.
// FAKEAGENT_SLEEP holds it before it ends.
const convAgent = `d="$FAKEAGENT_DIR"
n=$(( $(cat "$d/calls" 2>/dev/null || echo 0) + 1 )); echo $n > "$d/calls"
printf '%s\0' "$@" > "$d/argv.$n"
pwd -P > "$d/cwd.$n"
id=""; prev=""; resumed=""
for a in "$@"; do
  case "$prev" in
    --session-id) id="$a" ;;
    --resume|--session) id="$a"; resumed=1 ;;
    resume) id="$a"; resumed=1 ;;
  esac
  prev="$a"
done
if [ -z "$id" ]; then id="vendor-$n"; fi
t=$(( $(cat "$d/turns.$id" 2>/dev/null || echo 0) + 1 )); echo $t > "$d/turns.$id"
if [ -n "$FAKEAGENT_SLEEP" ]; then sleep "$FAKEAGENT_SLEEP"; fi
case "$FAKEAGENT_KIND" in
  claude) printf '{"type":"system","subtype":"init","session_id":"%s"}\n{"type":"result","subtype":"success","is_error":false,"result":"turn %s of %s"}\n' "$id" "$t" "$id" ;;
  codex) printf '{"type":"thread.started","thread_id":"%s"}\n{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"turn %s of %s"}}\n{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\n' "$id" "$t" "$id" ;;
  pi) printf '{"type":"session","version":3,"id":"%s"}\n{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"turn %s of %s"}],"stopReason":"stop"}}\n' "$id" "$t" "$id" ;;
  *) printf 'turn %s\n' "$t" ;;
esac
`

// newConvFixture is a fixture whose agent is convAgent and whose tools
// share one registry (as a process's sessions do).
func newConvFixture(t *testing.T, agent string, reg *delegation.Registry) *fixture {
	t.Helper()
	f := newFixture(t, agent, "FAKEAGENT_KIND="+agent)
	if err := os.WriteFile(f.script, []byte(convAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	if reg == nil {
		reg = delegation.NewRegistry(delegation.RegistryOptions{})
	}
	f.opts.Conversations = reg
	return f
}

func (f *fixture) argvN(t *testing.T, n int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.out, "argv."+string(rune('0'+n))))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestConversationMapping: a new conversation, then a call continuing it,
// per agent, through real runs of the fake CLI: each CLI's own resume
// arguments, the handle and turn in the result, the reply of the same
// vendor conversation.
func TestConversationMapping(t *testing.T) {
	tests := []struct {
		agent          string
		first, second  []string // ID: the vendor id, UUID: a fresh one
		firstID        string   // "" = the UUID SCV chose
		wantFirstReply string
	}{
		{agent: "claude",
			first:  []string{"--output-format", "stream-json", "--verbose", "--session-id", "UUID", "first task"},
			second: []string{"--output-format", "stream-json", "--verbose", "--resume", "ID", "follow-up"}},
		// codex's fixed "exec" is the override's script here; the real
		// argv is `exec --json -o FILE resume <thread id> <prompt>`.
		{agent: "codex", firstID: "vendor-1",
			first:  []string{"--json", "-o", "OUTFILE", "first task"},
			second: []string{"--json", "-o", "OUTFILE", "resume", "ID", "follow-up"}},
		{agent: "pi", firstID: "vendor-1",
			first:  []string{"--mode", "json", "first task"},
			second: []string{"--mode", "json", "--session", "ID", "follow-up"}},
	}
	outRE := regexp.MustCompile(`/adapters/codex/tmp/codex-[0-9a-f]{6}/last-message\.txt$`)
	norm := func(argv []string, id string) []string {
		out := make([]string, len(argv))
		for i, s := range argv {
			switch {
			case s == id && id != "":
				out[i] = "ID"
			case uuidRE.MatchString(s):
				out[i] = "UUID"
			case outRE.MatchString(s):
				out[i] = "OUTFILE"
			default:
				out[i] = s
			}
		}
		return out
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			f := newConvFixture(t, tc.agent, nil)
			_, r1 := f.run(t, tc.agent, map[string]any{"prompt": "first task"})
			if r1.Status != StatusCompleted || r1.Session != tc.agent+"-1" || r1.Turn != 1 {
				t.Fatalf("first call: %+v", r1)
			}
			a1 := f.argvN(t, 1)
			id := tc.firstID
			if id == "" {
				id = a1[4] // the --session-id SCV chose
			}
			if diff := cmp.Diff(tc.first, norm(a1, "")); diff != "" {
				t.Errorf("first argv (-want +got):\n%s", diff)
			}
			if r1.Reply != "turn 1 of "+id {
				t.Errorf("first reply %q", r1.Reply)
			}
			_, r2 := f.run(t, tc.agent, map[string]any{"prompt": "follow-up", "session": r1.Session})
			if r2.Status != StatusCompleted || r2.Session != r1.Session || r2.Turn != 2 {
				t.Fatalf("second call: %+v", r2)
			}
			if diff := cmp.Diff(tc.second, norm(f.argvN(t, 2), id)); diff != "" {
				t.Errorf("second argv (-want +got):\n%s", diff)
			}
			if r2.Reply != "turn 2 of "+id {
				t.Errorf("second reply %q: not the same vendor conversation", r2.Reply)
			}
			// The vendor id never reaches the model (the fake's reply
			// names it, which a real agent's would not).
			res, r3 := f.run(t, tc.agent, map[string]any{"prompt": "third", "session": r1.Session})
			var fields map[string]any
			json.Unmarshal([]byte(res.Output), &fields)
			delete(fields, "reply")
			if b, _ := json.Marshal(fields); r3.Turn != 3 || strings.Contains(string(b), id) {
				t.Errorf("third call: %+v\n%s", r3, res.Output)
			}
			// A new call without session is a new conversation.
			_, r4 := f.run(t, tc.agent, map[string]any{"prompt": "other"})
			if r4.Session != tc.agent+"-2" || r4.Turn != 1 {
				t.Errorf("a call without session: %+v", r4)
			}
		})
	}
}

func planErr(t *testing.T, f *fixture, agent string, args map[string]any) *tool.Error {
	t.Helper()
	_, err := f.call(t, agent, args)
	var te *tool.Error
	if !errors.As(err, &te) {
		t.Fatalf("plan of %v: err = %v, want a tool error", args, err)
	}
	return te
}

// TestConversationRefused: what a call naming a session cannot do is
// refused before any approval, with a message saying what to do.
func TestConversationRefused(t *testing.T) {
	reg := delegation.NewRegistry(delegation.RegistryOptions{})
	f := newConvFixture(t, "codex", reg)
	f.opts.Overrides["claude"] = Override{Command: "/bin/bash", Args: []string{f.script}}
	os.MkdirAll(filepath.Join(f.workspace, "sub"), 0o755)
	_, r := f.run(t, "codex", map[string]any{"prompt": "start"})
	if r.Session != "codex-1" {
		t.Fatalf("first: %+v", r)
	}
	tests := []struct {
		name, agent string
		args        map[string]any
		want        string
	}{
		{"vendor thread id", "codex", map[string]any{"session": "vendor-1"}, `session "vendor-1" is not a conversation handle`},
		{"vendor uuid", "claude", map[string]any{"session": "340ddb02-f1f4-4160-adbd-2bcb17be8553"}, "an agent's own session or thread id is not accepted"},
		{"unknown", "codex", map[string]any{"session": "codex-5"}, "unknown conversation codex-5 in this SCV session (it has codex-1)"},
		{"other agent", "claude", map[string]any{"session": "codex-1"}, "codex-1 is a conversation with agent_codex, not agent_claude"},
		{"other directory", "codex", map[string]any{"session": "codex-1", "cwd": "sub"}, "conversation codex-1 runs in " + f.workspace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"prompt": "go on"}
			for k, v := range tc.args {
				args[k] = v
			}
			te := planErr(t, f, tc.agent, args)
			if te.Kind != tool.InvalidArguments || !strings.Contains(te.Message, tc.want) {
				t.Errorf("%s: %v, want %q", te.Kind, te.Message, tc.want)
			}
		})
	}
	// The conversation's own directory, named, is fine.
	if _, err := f.call(t, "codex", map[string]any{"prompt": "go on", "session": "codex-1", "cwd": "."}); err != nil {
		t.Errorf("the conversation's directory named: %v", err)
	}
	for _, agent := range []string{"grok", "dsh"} {
		t.Run(agent, func(t *testing.T) {
			g := newConvFixture(t, agent, reg)
			te := planErr(t, g, agent, map[string]any{"prompt": "x", "session": agent + "-1"})
			if te.Kind != tool.InvalidArguments || !strings.Contains(te.Message, "agent_"+agent+" cannot continue a conversation") {
				t.Errorf("%s: %v", te.Kind, te.Message)
			}
			// Without session it runs, and its result has no handle.
			res, r := g.run(t, agent, map[string]any{"prompt": "x"})
			if r.Status != StatusCompleted || r.Session != "" || r.Turn != 0 || strings.Contains(res.Output, `"session"`) {
				t.Errorf("%s result: %s", agent, res.Output)
			}
		})
	}
}

// TestConversationBusy: one turn at a time. A second call while one runs
// fails session_busy naming the running call, at plan time and at run
// time (when it was approved before the first began).
func TestConversationBusy(t *testing.T) {
	f := newConvFixture(t, "pi", nil)
	_, r := f.run(t, "pi", map[string]any{"prompt": "start"})
	// Approved before the first continuation starts.
	late, err := f.call(t, "pi", map[string]any{"prompt": "late", "session": r.Session})
	if err != nil {
		t.Fatal(err)
	}
	f.opts.Env = append(f.opts.Env, "FAKEAGENT_SLEEP=30")
	env := f.env()
	env.CallID = "call_first"
	p, err := f.tool(t, "pi").Plan(env, json.RawMessage(`{"prompt":"slow","session":"pi-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	done := make(chan tool.Result, 1)
	go func() { done <- p.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for f.opts.Conversations.Busy("sess1", "pi-1") == "" {
		if time.Now().After(deadline) {
			t.Fatal("the first call never took the conversation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	te := planErr(t, f, "pi", map[string]any{"prompt": "again", "session": "pi-1"})
	if te.Kind != tool.SessionBusy || !strings.Contains(te.Message, "call call_first is still running") {
		t.Errorf("plan while busy: %s %q", te.Kind, te.Message)
	}
	if res := late.Run(t.Context()); res.Success || res.Error != tool.SessionBusy || !strings.Contains(res.Output, "call_first") {
		t.Errorf("run while busy: %+v", res)
	}
	cancel()
	if res := <-done; res.Error != tool.Cancelled {
		t.Errorf("cancelled first call: %+v", res)
	}
	// The turn ended: the conversation is free again.
	if got := f.opts.Conversations.Busy("sess1", "pi-1"); got != "" {
		t.Errorf("still busy with %q after the call ended", got)
	}
}

// TestConversationKeepsItsDirectory: a conversation started in a
// directory continues there when the call omits cwd.
func TestConversationKeepsItsDirectory(t *testing.T) {
	f := newConvFixture(t, "claude", nil)
	sub := filepath.Join(f.workspace, "proj", "sub")
	os.MkdirAll(sub, 0o755)
	_, r := f.run(t, "claude", map[string]any{"prompt": "start", "cwd": "proj/sub"})
	p, err := f.call(t, "claude", map[string]any{"prompt": "go on", "session": r.Session})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Summary, "Directory: "+sub+"\n") || !strings.Contains(p.Summary, "Conversation: continues claude-1\n") {
		t.Errorf("summary:\n%s", p.Summary)
	}
	p.Run(t.Context())
	for n := 1; n <= 2; n++ {
		b, _ := os.ReadFile(filepath.Join(f.out, "cwd."+string(rune('0'+n))))
		if got := strings.TrimSpace(string(b)); got != sub {
			t.Errorf("call %d ran in %q, want %q", n, got, sub)
		}
	}
}

// TestConversationEvictionAndExpiry through the tool: the least recently
// used conversation closes when a new one needs room, an idle one
// expires, and both say so when named.
func TestConversationEvictionAndExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	reg := delegation.NewRegistry(delegation.RegistryOptions{Max: 2, Idle: time.Hour, Now: clock})
	f := newConvFixture(t, "codex", reg)
	for i := 1; i <= 2; i++ {
		f.run(t, "codex", map[string]any{"prompt": "task"})
		now = now.Add(time.Minute)
	}
	f.run(t, "codex", map[string]any{"prompt": "again", "session": "codex-1"}) // codex-2 is now the LRU
	_, r := f.run(t, "codex", map[string]any{"prompt": "third"})
	if r.Session != "codex-3" {
		t.Fatalf("third: %+v", r)
	}
	te := planErr(t, f, "codex", map[string]any{"prompt": "x", "session": "codex-2"})
	if !strings.Contains(te.Message, "conversation codex-2 is closed: it was the least recently used") || !strings.Contains(te.Message, "agent.max_conversations = 2") {
		t.Errorf("evicted: %q", te.Message)
	}
	if _, err := f.call(t, "codex", map[string]any{"prompt": "x", "session": "codex-1"}); err != nil {
		t.Errorf("codex-1 was used recently: %v", err)
	}
	now = now.Add(time.Hour + time.Second)
	te = planErr(t, f, "codex", map[string]any{"prompt": "x", "session": "codex-1"})
	if !strings.Contains(te.Message, "idle for more than 3600 s (agent.conversation_idle_seconds)") {
		t.Errorf("expired: %q", te.Message)
	}
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}

// TestResumeArgv pins the real command lines of a continued conversation,
// fixed arguments and permission switches included: Codex's exec options
// come before its resume subcommand, which takes the thread id, then the
// prompt.
func TestResumeArgv(t *testing.T) {
	tests := []struct {
		agent string
		full  bool
		want  []string
	}{
		{"claude", true, []string{"-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose", "--resume", "VID", "--model", "m", "--effort", "high", "next"}},
		{"codex", true, []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "-c", `web_search="live"`, "--json", "-o", "/o", "-m", "m", "-c", `model_reasoning_effort="high"`, "resume", "VID", "next"}},
		{"codex", false, []string{"exec", "--json", "-o", "/o", "resume", "VID", "next"}},
		{"pi", false, []string{"-p", "--mode", "json", "--session", "VID", "--model", "m", "--thinking", "high", "next"}},
	}
	for _, tc := range tests {
		d, _ := Lookup(tc.agent)
		sel := Selection{Resume: "VID", SessionID: "NEW", OutputFile: "/o"}
		if tc.full {
			sel.Model, sel.Effort = "m", "high"
		}
		if tc.agent == "pi" {
			sel.Model, sel.Effort = "m", "high"
		}
		got, err := Adapter{Descriptor: d, Full: tc.full}.Argv(sel, "next")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s argv (-want +got):\n%s", tc.agent, diff)
		}
	}
	for _, agent := range []string{"grok", "dsh"} {
		d, _ := Lookup(agent)
		if _, err := (Adapter{Descriptor: d}).Argv(Selection{Resume: "x"}, "p"); err == nil {
			t.Errorf("%s built a resume command line", agent)
		}
	}
}

// TestRunStreamsProgress: a real run's stream reaches the call's progress
// sink as it arrives; the result carries none of it.
func TestRunStreamsProgress(t *testing.T) {
	lines, res := runProgress(t, "codex", "shell")
	if len(lines) != 3 || lines[1] != "$ echo hi" || lines[2] != "exit 0: echo hi" {
		t.Errorf("progress %q", lines)
	}
	if strings.Contains(res.Output, "echo hi") {
		t.Errorf("the result carries progress: %s", res.Output)
	}
}

// TestDescriptionSaysWhetherConversationsContinue: the model reads about
// `session` only for agents that can resume.
func TestDescriptionSaysWhetherConversationsContinue(t *testing.T) {
	f := newFixture(t, "codex")
	f.opts.Overrides["grok"] = Override{Command: "/bin/bash", Args: []string{f.script}}
	codex, grok := f.tool(t, "codex").Description(), f.tool(t, "grok").Description()
	if !strings.Contains(codex, `"session","turn"`) || !strings.Contains(codex, "(such as codex-1)") || strings.Contains(codex, "{{") {
		t.Errorf("codex description:\n%s", codex)
	}
	if strings.Contains(grok, `"session"`) || !strings.Contains(grok, "Grok Build cannot continue a conversation") || strings.Contains(grok, "{{") {
		t.Errorf("grok description:\n%s", grok)
	}
}
