package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

func hookSession(t *testing.T, fm *fakeModel, order *[]string, policy approval.Policy, ws string, hs ...hooks.Hook) *Session {
	t.Helper()
	s := newSession(t, fm, testTools(t, order), policy)
	s.opts.Workspace = ws
	s.opts.Hooks = hooks.New(hooks.Options{Hooks: hs, Env: []string{"PATH=/usr/bin:/bin"}, Workspace: ws, SessionID: "s1"})
	return s
}

func hookRuns(rec *recorder) []string {
	var out []string
	for _, e := range only[*proto.HookRan](rec) {
		out = append(out, e.Hook+":"+e.Outcome)
	}
	return out
}

// Every turn event fires once, in order, with the documented JSON on the
// hook's standard input (testdata/hooks_input.golden; go test -update
// rewrites it), and each run is a hook.ran event in the turn's stream.
func TestHookEventsGolden(t *testing.T) {
	ws := t.TempDir()
	log := filepath.Join(t.TempDir(), "log")
	logger := testutil.Script(t, ws, "log", `{ cat; echo; } >> `+log)
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "touch", `{"text":"a.txt"}`)), text("done")}}
	var hs []hooks.Hook
	for _, ev := range []string{hooks.UserPrompt, hooks.PreTool, hooks.PostTool, hooks.ApprovalRequested, hooks.TurnEnd} {
		hs = append(hs, hooks.Hook{Name: ev + "-log", Event: ev, Command: []string{logger}})
	}
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hs...)
	rec := &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) { _ = s.Resolve(e.ApprovalID, approval.Answer{Approved: true}) }
	s.RunTurn(t.Context(), "t1", "make a.txt", rec.emit)
	want := []string{"turn.started", "hook.ran", "assistant.completed", "tool.proposed", "hook.ran", "approval.requested", "hook.ran",
		"tool.started", "hook.ran", "tool.completed(touch,true,)", "assistant.delta", "assistant.completed", "hook.ran", "turn.completed"}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(string(b), ws, "$WS")
	approvalID := only[*proto.ApprovalRequested](rec)[0].ApprovalID
	got = strings.ReplaceAll(got, approvalID, "$APPROVAL_ID")
	golden := filepath.Join("testdata", "hooks_input.golden")
	if testutil.Update() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantLog, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if d := cmp.Diff(string(wantLog), got); d != "" {
		t.Errorf("hook input (-want +got; go test -update accepts it):\n%s", d)
	}
	for _, e := range only[*proto.HookRan](rec) {
		if e.Outcome != proto.HookOK || e.TurnID != "t1" || (e.Event == hooks.PreTool && (e.Tool != "touch" || e.CallID != "c1")) {
			t.Errorf("hook.ran %+v", e)
		}
	}
}

// A pre_tool deny: nothing runs, no approval is asked, the model sees the
// reason.
func TestPreToolDeny(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "touch", `{"text":"a.txt"}`)), text("ok")}}
	deny := testutil.Script(t, ws, "deny", `grep -q '"name":"touch"' && { echo "touch is not allowed here" >&2; exit 2; }; exit 0`)
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hooks.Hook{Name: "no-touch", Event: hooks.PreTool, Match: "to*", Command: []string{deny}})
	rec := &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) {
		t.Errorf("an approval was asked: %+v", e)
		_ = s.Resolve(e.ApprovalID, approval.Answer{})
	}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	if len(order) != 0 {
		t.Errorf("the denied call ran: %v", order)
	}
	want := "denied: hook no-touch denied the call: touch is not allowed here; do not retry this call unchanged"
	if c := only[*proto.ToolCompleted](rec); len(c) != 1 || c[0].Success || c[0].Output != want {
		t.Errorf("tool.completed = %+v", c)
	}
	if msgs := fm.requests[1].Messages; msgs[len(msgs)-1].Content != want {
		t.Errorf("the model saw %q", msgs[len(msgs)-1].Content)
	}
	if d := cmp.Diff([]string{"no-touch:deny"}, hookRuns(rec)); d != "" {
		t.Errorf("hook runs (-want +got):\n%s", d)
	}
}

// A pre_tool ask forces an approval of a call the policy runs unasked,
// and a session grant does not answer it.
func TestPreToolAsk(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "echo", `{"text":"a"}`)), text("ok")}}
	ask := testutil.Script(t, ws, "ask", `echo '{"decision":"ask","reason":"reads are audited"}'`)
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hooks.Hook{Name: "audit", Event: hooks.PreTool, Match: "echo", Command: []string{ask}})
	rec := &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) { _ = s.Resolve(e.ApprovalID, approval.Answer{Approved: true}) }
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	aps := only[*proto.ApprovalRequested](rec)
	if len(aps) != 1 || aps[0].Grant != nil || len(order) != 1 {
		t.Errorf("approvals %+v (want one, offering no grant), runs %v", aps, order)
	}
	if r := only[*proto.HookRan](rec); len(r) != 1 || r[0].Outcome != proto.HookAsk || r[0].Reason != "reads are audited" {
		t.Errorf("hook.ran = %+v", r)
	}
}

// A hook past its time limit never blocks the turn silently: hook_failed
// with the stderr tail; a pre_tool failure denies unless on_error allows.
func TestHookTimeoutAndCrash(t *testing.T) {
	ws := t.TempDir()
	slow := testutil.Script(t, ws, "slow", `echo "still thinking" >&2; sleep 30`)
	crash := testutil.Script(t, ws, "crash", `echo "segfault" >&2; kill -SEGV $$`)
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "echo", `{"text":"a"}`), call("c2", "touch", `{"text":"b"}`)), text("ok")}}
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws,
		hooks.Hook{Name: "slow", Event: hooks.PreTool, Match: "echo", Command: []string{slow}, Timeout: 300 * time.Millisecond, OnError: hooks.OnErrorAllow},
		hooks.Hook{Name: "crash", Event: hooks.PreTool, Match: "touch", Command: []string{crash}},
		hooks.Hook{Name: "slow-end", Event: hooks.TurnEnd, Command: []string{slow}, Timeout: 300 * time.Millisecond})
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	if d := cmp.Diff([]string{"a"}, order); d != "" {
		t.Errorf("calls run (-want +got):\n%s", d)
	}
	runs := only[*proto.HookRan](rec)
	if len(runs) != 3 {
		t.Fatalf("hook.ran events %+v", runs)
	}
	for _, r := range runs {
		if r.Outcome != proto.HookFailed || r.Stderr == "" {
			t.Errorf("hook.ran %+v, want hook_failed with stderr", r)
		}
	}
	if !strings.Contains(runs[0].Reason, "timed out") || !strings.Contains(runs[1].Reason, "signal") {
		t.Errorf("reasons %q, %q", runs[0].Reason, runs[1].Reason)
	}
	if _, ok := rec.last().(*proto.TurnCompleted); !ok {
		t.Errorf("the turn ended with %T", rec.last())
	}
}

// user_prompt hooks add context the model sees, or block the prompt.
func TestUserPromptHooks(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{text("ok")}}
	hook := testutil.Script(t, ws, "screen", `if grep -q password; then echo '{"decision":"block","reason":"the prompt holds a password"}'; else echo "on branch main"; fi`)
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hooks.Hook{Name: "screen", Event: hooks.UserPrompt, Command: []string{hook}})
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "my password is hunter2", rec.emit)
	if f := rec.failed(); f.Code != proto.FailPromptBlocked || f.Message != "hook screen blocked the prompt: the prompt holds a password" || len(fm.requests) != 0 || s.HistoryLen() != 0 {
		t.Errorf("blocked turn: %+v, %d model requests, %d history messages", f, len(fm.requests), s.HistoryLen())
	}
	rec = &recorder{}
	s.RunTurn(t.Context(), "t2", "hello", rec.emit)
	if got := fm.requests[0].Messages[0].Content; got != "hello\n\n[hook screen]\non branch main" {
		t.Errorf("the model saw %q", got)
	}
}

// post_tool notes reach the model with the result.
func TestPostToolNote(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "echo", `{"text":"a"}`)), text("ok")}}
	lint := testutil.Script(t, ws, "lint", `echo '{"note":"lint: 2 warnings"}'`)
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hooks.Hook{Name: "lint", Event: hooks.PostTool, Command: []string{lint}})
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	want := "echo:a\n\n[hook lint]\nlint: 2 warnings"
	msgs := fm.requests[1].Messages
	if c := only[*proto.ToolCompleted](rec); len(c) != 1 || c[0].Output != want || msgs[len(msgs)-1].Content != want {
		t.Errorf("tool.completed %+v, the model saw %q", c, msgs[len(msgs)-1].Content)
	}
}

// An approval a pre_tool hook forces is not answered by a session grant
// that covers the call.
func TestForcedAskIgnoresGrants(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "touch", `{"text":"a.txt"}`)), calls(call("c2", "touch", `{"text":"secret.txt"}`)), calls(call("c3", "touch", `{"text":"b.txt"}`)), text("ok")}}
	ask := testutil.Script(t, ws, "ask", `grep -q "secret.txt" && echo '{"decision":"ask","reason":"a secret file"}'; exit 0`)
	s := hookSession(t, fm, &order, approval.AskOnRisk, ws, hooks.Hook{Name: "guard", Event: hooks.PreTool, Match: "touch", Command: []string{ask}})
	rec := &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) {
		_ = s.Resolve(e.ApprovalID, approval.Answer{Approved: true, Session: e.Grant != nil})
	}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	var asked []string
	for _, a := range only[*proto.ApprovalRequested](rec) {
		asked = append(asked, a.CallID)
	}
	if d := cmp.Diff([]string{"c1", "c2"}, asked); d != "" {
		t.Errorf("approvals asked (-want +got; c3 is granted, c2 forced):\n%s", d)
	}
	if d := cmp.Diff([]string{"touch:a.txt", "touch:secret.txt", "touch:b.txt"}, order); d != "" {
		t.Errorf("calls run (-want +got):\n%s", d)
	}
}
