package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/toolcall"
)

// planTools are testTools plus run (process risk, like bash) and todo
// (read_only, hands a fixed list to Env.Todos, like todo_write).
func planTools(t *testing.T, order *[]string) *tool.Registry {
	t.Helper()
	base := testTools(t, order)
	run := tool.MustDefine("run", "run a command", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.Process, Summary: "run " + p.Text, Command: p.Text, Run: func(ctx context.Context) tool.Result {
			*order = append(*order, "run:"+p.Text)
			return tool.Result{Success: true, Output: "ran"}
		}}, nil
	})
	todo := tool.MustDefine("todo", "keep a list", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "todo", Run: func(ctx context.Context) tool.Result {
			env.Todos([]tool.TodoItem{{Content: p.Text, Status: "in_progress"}, {Content: "then", Status: "pending"}})
			return tool.Result{Success: true, Output: "listed"}
		}}, nil
	})
	list := []tool.Tool{run, todo}
	for _, n := range base.Names() {
		tl, _ := base.Get(n)
		list = append(list, tl)
	}
	r, err := tool.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// In plan mode a write (filesystem) and a command (process) are refused
// before approval: nobody is asked, no pre_tool hook runs, nothing runs,
// and the model sees "plan mode: read-only"; read_only calls run. The
// system prompt asks for a plan. Back in the default mode the same calls
// go to the approval policy again.
func TestPlanModeRefusesBeforeApproval(t *testing.T) {
	ws := t.TempDir()
	var order []string
	fm := &fakeModel{script: []step{
		calls(call("c1", "touch", `{"text":"a.txt"}`), call("c2", "run", `{"text":"rm -rf x"}`), call("c3", "echo", `{"text":"read"}`)),
		text("## Plan\n1. do it"),
	}}
	log := testutil.Script(t, ws, "log", `cat >/dev/null; echo ran >> `+ws+`/hook.log`)
	s := newSession(t, fm, planTools(t, &order), approval.AskAlways)
	s.opts.Hooks = hooks.New(hooks.Options{Hooks: []hooks.Hook{{Name: "log", Event: hooks.PreTool, Match: "*", Command: []string{log}}},
		Env: []string{"PATH=/usr/bin:/bin"}, Workspace: ws, SessionID: "s1"})
	if err := s.SetMode("nope"); err == nil || !strings.Contains(err.Error(), `mode "nope" is not default or plan`) {
		t.Fatalf("SetMode(nope) = %v", err)
	}
	if err := s.SetMode(proto.ModePlan); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) {
		if e.Name != "echo" {
			t.Errorf("an approval was asked for %s in plan mode", e.Name)
		}
		_ = s.Resolve(e.ApprovalID, approval.Answer{Approved: true})
	}
	s.RunTurn(t.Context(), "t1", "plan it", rec.emit)
	if d := cmp.Diff([]string{"read"}, order); d != "" {
		t.Errorf("what ran (-want +got):\n%s", d)
	}
	done := only[*proto.ToolCompleted](rec)
	if len(done) != 3 {
		t.Fatalf("tool.completed = %+v", done)
	}
	for i, name := range []string{"touch", "run"} {
		if c := done[i]; c.Name != name || c.Success || c.Error != string(tool.Denied) || !strings.HasPrefix(c.Output, "plan mode: read-only") {
			t.Errorf("%s in plan mode: %+v", name, c)
		}
	}
	if !done[2].Success {
		t.Errorf("echo in plan mode: %+v", done[2])
	}
	if started := only[*proto.ToolStarted](rec); len(started) != 1 || started[0].Name != "echo" {
		t.Errorf("tool.started = %+v", started)
	}
	if runs := hookRuns(rec); len(runs) != 1 {
		t.Errorf("pre_tool hook runs = %v, want only echo's", runs)
	}
	msgs := fm.requests[1].Messages
	if got := msgs[2].Content; got != "plan mode: read-only; the session is in plan mode, where only read-only tools run, so this touch call (risk filesystem) was not run. Do not retry it: finish the plan, and the user will leave plan mode to carry it out" {
		t.Errorf("the model saw %q", got)
	}
	for _, r := range fm.requests {
		if !strings.HasSuffix(r.Instructions, PlanPrompt) || !strings.HasPrefix(r.Instructions, "sys") {
			t.Errorf("plan mode instructions = %q", r.Instructions)
		}
	}

	// Leaving plan mode: the same write goes to the policy (asked) and runs.
	if err := s.SetMode(proto.ModeDefault); err != nil {
		t.Fatal(err)
	}
	fm.script = []step{calls(call("c4", "touch", `{"text":"a.txt"}`)), text("done")}
	asked := 0
	rec = &recorder{}
	rec.onApproval = func(e *proto.ApprovalRequested) {
		asked++
		_ = s.Resolve(e.ApprovalID, approval.Answer{Approved: true})
	}
	s.RunTurn(t.Context(), "t2", "Carry out this plan", rec.emit)
	if asked != 1 || !slices.Contains(order, "touch:a.txt") {
		t.Errorf("default mode: asked %d, ran %v", asked, order)
	}
	if last := fm.requests[len(fm.requests)-1]; last.Instructions != "sys" {
		t.Errorf("default mode instructions = %q", last.Instructions)
	}
}

// The refusal is the same wherever a call comes from: toolcall.Run with
// ReadOnly never consults the check or the approver.
func TestToolcallReadOnly(t *testing.T) {
	var order []string
	reg := planTools(t, &order)
	res, err := toolcall.Run(t.Context(), toolcall.Call{Registry: reg, Policy: approval.AskOnRisk, ReadOnly: true, Name: "run", Args: []byte(`{"text":"ls"}`),
		Check: func(context.Context, tool.Plan) toolcall.Verdict {
			t.Error("check consulted")
			return toolcall.Verdict{}
		},
		Approve: func(context.Context, approval.Request) approval.Answer {
			t.Error("approver consulted")
			return approval.Answer{}
		}})
	if err != nil || res.Success || res.Error != tool.Denied || !strings.HasPrefix(res.Output, "plan mode: read-only") || len(order) != 0 {
		t.Errorf("result %+v, %v, ran %v", res, err, order)
	}
}

// A todo call's list becomes todo.updated (before the call's
// tool.completed) and the session's latest list.
func TestTodoSink(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "todo", `{"text":"first"}`)), text("ok")}}
	s := newSession(t, fm, planTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	want := []proto.TodoItem{{Content: "first", Status: "in_progress"}, {Content: "then", Status: "pending"}}
	ups := only[*proto.TodoUpdated](rec)
	if len(ups) != 1 || ups[0].TurnID != "t1" {
		t.Fatalf("todo.updated = %+v", ups)
	}
	if d := cmp.Diff(want, ups[0].Items); d != "" {
		t.Errorf("todo.updated items (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, s.Todos()); d != "" {
		t.Errorf("Todos (-want +got):\n%s", d)
	}
	types := rec.types()
	if i, j := slices.Index(types, "todo.updated"), slices.Index(types, "tool.completed(todo,true,)"); i < 0 || j < i {
		t.Errorf("events %v: todo.updated must come before the call's tool.completed", types)
	}
}

// Plan mode's system prompt section counts in the context estimate.
func TestPlanModeCountsItsPrompt(t *testing.T) {
	var order []string
	s := newSession(t, &fakeModel{}, planTools(t, &order), approval.AskOnRisk)
	before := s.ContextTokens()
	if err := s.SetMode(proto.ModePlan); err != nil {
		t.Fatal(err)
	}
	if got, want := s.ContextTokens(), before+estimateText(s.opts.Context, "\n\n"+PlanPrompt); got != want || want <= before {
		t.Errorf("context tokens in plan mode = %d, want %d (default mode %d)", got, want, before)
	}
}
