package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// TestNestedApproval: a running call's nested approval (tool.Env.Ask, a
// delegated agent's own permission request) reaches the client as an
// approval.requested of that call, after its tool.started, with the step's
// summary and risk; the client's answer decides the step.
func TestNestedApproval(t *testing.T) {
	for _, allow := range []bool{true, false} {
		var answers []bool
		deleg := tool.MustDefine("deleg", "delegates", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
			return tool.Plan{Risk: tool.Delegate, Summary: "delegate " + p.Text, Run: func(ctx context.Context) tool.Result {
				ok, _ := env.Ask(ctx, tool.Plan{Risk: tool.Process, Summary: "[codex-1] go test (execute)"})
				answers = append(answers, ok)
				return tool.Result{Success: true, Output: "done"}
			}}, nil
		})
		reg, err := tool.NewRegistry(deleg)
		if err != nil {
			t.Fatal(err)
		}
		fm := &fakeModel{script: []step{calls(call("c1", "deleg", `{"text":"x"}`)), text("ok")}}
		s := newSession(t, fm, reg, approval.AskOnRisk)
		var asked []proto.ApprovalRequested
		rec := &recorder{}
		rec.onApproval = func(e *proto.ApprovalRequested) {
			asked = append(asked, *e)
			ans := true // the call itself
			if e.Summary != "delegate x" {
				ans = allow
			}
			if err := s.Resolve(e.ApprovalID, approval.Answer{Approved: ans}); err != nil {
				t.Errorf("resolve: %v", err)
			}
		}
		s.RunTurn(t.Context(), "t1", "go", rec.emit)
		if len(asked) != 2 || asked[1].CallID != "c1" || asked[1].Name != "deleg" || asked[1].Risk != "process" || asked[1].Summary != "[codex-1] go test (execute)" {
			t.Fatalf("approvals asked: %+v", asked)
		}
		if !slices.Equal(answers, []bool{allow}) {
			t.Errorf("the step's answer = %v, want %v", answers, allow)
		}
		types := rec.types()
		started := slices.Index(types, "tool.started")
		if started < 0 || slices.Index(types[started:], "approval.requested") < 0 {
			t.Errorf("events %v: the nested approval should follow tool.started", types)
		}
	}
}
