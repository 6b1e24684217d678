package hooks

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
)

// runner is a runner over hooks in a fresh workspace.
func runner(t *testing.T, ws string, hs ...Hook) *Runner {
	t.Helper()
	return New(Options{Hooks: hs, Env: []string{"PATH=/usr/bin:/bin", "KEEP=1"}, Workspace: ws, SessionID: "s1"})
}

func preTool(name string) Input {
	return Input{Event: PreTool, TurnID: "t1", Tool: &Tool{Name: name, CallID: "c1", Risk: "process", Summary: "rm -rf /", Arguments: json.RawMessage(`{"command":"rm -rf /"}`)}}
}

func collect(rs *[]Ran) func(Ran) { return func(r Ran) { *rs = append(*rs, r) } }

func TestPreToolDecisions(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name, body string
		onError    string
		want       Decision
		outcome    string
	}{
		{"exit 0 allows", `cat >/dev/null; exit 0`, "", Decision{}, OutcomeOK},
		{"exit 2 denies with stderr", `cat >/dev/null; echo "no rm -rf here" >&2; exit 2`, "", Decision{Deny: true, Reason: "no rm -rf here", Hook: "h"}, OutcomeDeny},
		{"JSON deny", `echo '{"decision":"deny","reason":"not on Fridays"}'`, "", Decision{Deny: true, Reason: "not on Fridays", Hook: "h"}, OutcomeDeny},
		{"JSON ask", `echo '{"decision":"ask","reason":"touches production"}'`, "", Decision{Ask: true, Reason: "touches production", Hook: "h"}, OutcomeAsk},
		{"JSON allow", `echo '{"decision":"allow"}'`, "", Decision{}, OutcomeOK},
		{"a decision of another event fails", `echo '{"decision":"block"}'`, "", Decision{Deny: true, Hook: "h", Reason: `the hook failed (decision "block" means nothing for a pre_tool hook) and its on_error is "deny"`}, OutcomeFailed},
		{"crash denies by default", `echo "panic: boom" >&2; exit 1`, "", Decision{Deny: true, Hook: "h", Reason: `the hook failed (exited with status 1) and its on_error is "deny"`}, OutcomeFailed},
		{"crash with on_error allow", `exit 1`, OnErrorAllow, Decision{}, OutcomeFailed},
		{"killed", `kill -9 $$`, OnErrorAllow, Decision{}, OutcomeFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, ws, Hook{Name: "h", Event: PreTool, Match: "ba*", Command: []string{testutil.Script(t, t.TempDir(), "h", tc.body)}, OnError: tc.onError})
			var rs []Ran
			d := r.Run(t.Context(), preTool("bash"), collect(&rs))
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if len(rs) != 1 || rs[0].Outcome != tc.outcome || rs[0].Hook != "h" || rs[0].Tool != "bash" || rs[0].Event != PreTool {
				t.Errorf("runs = %+v, want one %s", rs, tc.outcome)
			}
			if tc.name == "crash denies by default" && rs[0].Stderr != "panic: boom" {
				t.Errorf("stderr tail = %q", rs[0].Stderr)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	ws := t.TempDir()
	deny := testutil.Script(t, ws, "deny", `exit 2`)
	r := runner(t, ws, Hook{Name: "h", Event: PreTool, Match: "mcp__github__*", Command: []string{deny}})
	for tool, want := range map[string]bool{"mcp__github__create_issue": true, "mcp__gitlab__x": false, "bash": false} {
		if got := r.Run(t.Context(), preTool(tool), nil).Deny; got != want || r.Has(PreTool, tool) != want {
			t.Errorf("%s: denied %v, Has %v, want %v", tool, got, r.Has(PreTool, tool), want)
		}
	}
	var none *Runner
	if none.Has(PreTool, "bash") || none.Run(t.Context(), preTool("bash"), nil) != (Decision{}) || New(Options{}) != nil {
		t.Error("no hooks must decide nothing")
	}
}

func TestPromptAndNoteTexts(t *testing.T) {
	ws := t.TempDir()
	r := runner(t, ws,
		Hook{Name: "ctx", Event: UserPrompt, Command: []string{testutil.Script(t, ws, "ctx", `echo "branch: main"`)}},
		Hook{Name: "ctx2", Event: UserPrompt, Command: []string{testutil.Script(t, ws, "ctx2", `echo '{"context":"tests: 3 failing"}'`)}},
		Hook{Name: "block", Event: UserPrompt, Command: []string{testutil.Script(t, ws, "block", `grep -q secret && echo '{"decision":"block","reason":"no secrets in prompts"}'; exit 0`)}},
		Hook{Name: "lint", Event: PostTool, Match: "write", Command: []string{testutil.Script(t, ws, "lint", `echo "a.go:1: missing doc" >&2; exit 2`)}},
	)
	d := r.Run(t.Context(), Input{Event: UserPrompt, Prompt: "hello"}, nil)
	if want := (Decision{Context: "[hook ctx]\nbranch: main\n\n[hook ctx2]\ntests: 3 failing"}); d != want {
		t.Errorf("prompt decision = %+v, want %+v", d, want)
	}
	d = r.Run(t.Context(), Input{Event: UserPrompt, Prompt: "my secret"}, nil)
	if !d.Deny || d.Reason != "no secrets in prompts" || d.Hook != "block" {
		t.Errorf("blocked prompt decision = %+v", d)
	}
	d = r.Run(t.Context(), Input{Event: PostTool, Tool: &Tool{Name: "write"}, Result: &Result{Success: true}}, nil)
	if want := (Decision{Note: "[hook lint]\na.go:1: missing doc"}); d != want {
		t.Errorf("post_tool decision = %+v, want %+v", d, want)
	}
}

// A hook past its time limit is stopped with its group; the turn goes on
// (a notification) or the call is denied (pre_tool, on_error deny).
func TestTimeout(t *testing.T) {
	ws := t.TempDir()
	slow := testutil.Script(t, ws, "slow", `echo "thinking" >&2; sleep 30`)
	r := runner(t, ws, Hook{Name: "slow", Event: PreTool, Command: []string{slow}, Timeout: 300 * time.Millisecond},
		Hook{Name: "slow-note", Event: TurnEnd, Command: []string{slow}, Timeout: 300 * time.Millisecond})
	var rs []Ran
	start := time.Now()
	d := r.Run(t.Context(), preTool("bash"), collect(&rs))
	if time.Since(start) > 20*time.Second {
		t.Errorf("the hook was not stopped at its time limit")
	}
	if !d.Deny || !strings.Contains(d.Reason, "timed out after 300ms") || len(rs) != 1 || rs[0].Outcome != OutcomeFailed || rs[0].Stderr != "thinking" {
		t.Errorf("decision %+v, runs %+v", d, rs)
	}
	if d := r.Run(t.Context(), Input{Event: TurnEnd, Outcome: "completed"}, nil); d != (Decision{}) {
		t.Errorf("a failed notification decided %+v", d)
	}
}

// A hook printing 10 MB on each stream is read within bounds.
func TestHugeOutputIsBounded(t *testing.T) {
	ws := t.TempDir()
	flood := testutil.Script(t, ws, "flood", `head -c 10000000 /dev/zero | tr '\0' 'x'; head -c 10000000 /dev/zero | tr '\0' 'y' >&2; exit 2`)
	r := runner(t, ws, Hook{Name: "flood", Event: PostTool, Command: []string{flood}},
		Hook{Name: "flood-ok", Event: UserPrompt, Command: []string{testutil.Script(t, ws, "flood-ok", `head -c 10000000 /dev/zero | tr '\0' 'x'`)}})
	d := r.Run(t.Context(), Input{Event: PostTool, Tool: &Tool{Name: "bash"}, Result: &Result{}}, nil)
	if len(d.Note) > MaxTextBytes+64 || !strings.HasSuffix(d.Note, "yyyy") {
		t.Errorf("note of %d bytes, want at most %d of the stderr", len(d.Note), MaxTextBytes+64)
	}
	d = r.Run(t.Context(), Input{Event: UserPrompt, Prompt: "p"}, nil)
	if len(d.Context) > MaxTextBytes+64 || !strings.Contains(d.Context, "xxxx") {
		t.Errorf("context of %d bytes, want at most %d", len(d.Context), MaxTextBytes+64)
	}
}

// A process a hook leaves behind in a new session (setsid) is stopped when
// the hook ends.
func TestSetsidChildIsReaped(t *testing.T) {
	ws := t.TempDir()
	pidFile := filepath.Join(ws, "child.pid")
	hook := testutil.Script(t, ws, "leave", `setsid bash -c 'echo $$ > `+pidFile+`; exec sleep 300' </dev/null >/dev/null 2>&1 &
for i in $(seq 100); do [ -s `+pidFile+` ] && break; sleep 0.05; done
exit 0`)
	r := runner(t, ws, Hook{Name: "leave", Event: TurnEnd, Command: []string{hook}})
	r.Run(t.Context(), Input{Event: TurnEnd}, nil)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the setsid child %d outlived its hook", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The hook's environment is exactly the runner's plus the hook's own
// variables; its working directory is the workspace; its input is the
// event.
func TestEnvironmentCwdAndInput(t *testing.T) {
	ws := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	testutil.Script(t, ws, "dump", `{ env | grep -v '^_=\|^PWD=\|^SHLVL=' | sort; pwd; cat; } > `+out)
	r := New(Options{Hooks: []Hook{{Name: "dump", Event: PreTool, Command: []string{"./dump"}}}, Env: []string{"PATH=/usr/bin:/bin", "KEEP=1", "SCV_HOOK_EVENT=forged"}, Workspace: ws, SessionID: "s1"})
	r.Run(t.Context(), preTool("bash"), nil)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "KEEP=1\nPATH=/usr/bin:/bin\nSCV_HOOK_EVENT=pre_tool\nSCV_HOOK_NAME=dump\nSCV_SESSION_ID=s1\nSCV_WORKSPACE=" + ws + "\n" + ws + "\n" +
		`{"event":"pre_tool","hook":"dump","session_id":"s1","turn_id":"t1","cwd":"` + ws + `","tool":{"name":"bash","call_id":"c1","risk":"process","summary":"rm -rf /","arguments":{"command":"rm -rf /"},"arguments_bytes":22}}`
	got := string(b)
	// The tag differs on every run.
	lines := strings.Split(got, "\n")
	var kept []string
	for _, l := range lines {
		if !strings.HasPrefix(l, TagKey+"=") {
			kept = append(kept, l)
		}
	}
	if d := cmp.Diff(want, strings.Join(kept, "\n")); d != "" {
		t.Errorf("environment, cwd and input (-want +got):\n%s", d)
	}
	if !strings.Contains(got, TagKey+"=") {
		t.Error("the hook's processes carry no tag")
	}
}

func TestLongInputIsBounded(t *testing.T) {
	in := bounded(Input{Event: PostTool, Prompt: strings.Repeat("p", MaxFieldBytes+10),
		Tool:   &Tool{Name: "write", Arguments: json.RawMessage(`"` + strings.Repeat("a", MaxFieldBytes) + `"`)},
		Result: &Result{Output: strings.Repeat("o", MaxFieldBytes*3)}})
	if !in.Truncated || len(in.Prompt) != MaxFieldBytes || len(in.Result.Output) != MaxFieldBytes || in.Tool.Arguments != nil || in.Tool.ArgumentsBytes != MaxFieldBytes+2 {
		t.Errorf("bounded input: truncated %v, prompt %d, output %d, arguments %d (%d bytes)", in.Truncated, len(in.Prompt), len(in.Result.Output), len(in.Tool.Arguments), in.Tool.ArgumentsBytes)
	}
}

func TestMissingCommand(t *testing.T) {
	r := runner(t, t.TempDir(), Hook{Name: "gone", Event: PreTool, Command: []string{"no-such-hook-command"}})
	var rs []Ran
	d := r.Run(t.Context(), preTool("bash"), collect(&rs))
	if !d.Deny || len(rs) != 1 || !strings.Contains(rs[0].Reason, "not found in the PATH") {
		t.Errorf("decision %+v, runs %+v", d, rs)
	}
}

// Both kinds of input file (the memory file, and the temporary file used
// where there is none) hold the event from their start, and can be read
// again after a seek.
func TestInputFiles(t *testing.T) {
	data := []byte(`{"event":"pre_tool"}`)
	for name, open := range map[string]func([]byte) (*os.File, error){"input": inputFile, "temp": tempInputFile} {
		t.Run(name, func(t *testing.T) {
			f, err := open(data)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for range 2 {
				got, err := io.ReadAll(f)
				if err != nil || string(got) != string(data) {
					t.Fatalf("read %q, %v; want %q", got, err, data)
				}
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
