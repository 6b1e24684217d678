package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
)

// TestConfigureKeepsTheRunningTurnsModel changes the model while a turn's
// first model request streams: the same turn's second request keeps the
// old model and effort, the next turn uses the new ones.
func TestConfigureKeepsTheRunningTurnsModel(t *testing.T) {
	var order []string
	fm := &fakeModel{}
	var s *Session
	fm.script = []step{
		func(ctx context.Context, on func(model.Delta)) (model.Response, error) {
			s.Configure("m2", "high") // session.configure arrives mid-turn
			return calls(model.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"x"}`})(ctx, on)
		},
		text("first"),
		text("second"),
	}
	s = newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(context.Background(), "t1", "go", rec.emit)
	s.RunTurn(context.Background(), "t2", "again", rec.emit)
	var got [][2]string
	for _, r := range fm.requests {
		got = append(got, [2]string{r.Model, r.ReasoningEffort})
	}
	want := [][2]string{{"m", ""}, {"m", ""}, {"m2", "high"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("models of the requests (-want +got):\n%s", d)
	}
	if s.ModelName() != "m2" {
		t.Errorf("ModelName = %q", s.ModelName())
	}
}
