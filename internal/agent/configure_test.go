package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/filechange"
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

// TestTurnUndoBound: a turn's writes merge per path (the content before
// the turn, the hash of the last write), and past MaxTurnUndoBytes of
// earlier content a file is recorded as not undoable.
func TestTurnUndoBound(t *testing.T) {
	s := newSession(t, &fakeModel{}, nil, approval.AskOnRisk)
	big := make([]byte, MaxTurnUndoBytes/2)
	s.noteChange(filechange.Change{Path: "a", Existed: true, Before: big, After: "h1"})
	s.noteChange(filechange.Change{Path: "a", Existed: true, Before: []byte("second before"), After: "h2"})
	s.noteChange(filechange.Change{Path: "b", Existed: true, Before: big, After: "h3"})
	s.noteChange(filechange.Change{Path: "c", Existed: true, Before: []byte("x"), After: "h4"})
	s.noteChange(filechange.Change{Path: "d", After: "h5"})
	got := s.changes
	if len(got) != 4 || len(got[0].Before) != len(big) || got[0].After != "h2" || len(got[1].Before) != len(big) || got[1].Unkept != "" {
		t.Fatalf("merged changes: %d entries, a: %d bytes after %q, b unkept %q", len(got), len(got[0].Before), got[0].After, got[1].Unkept)
	}
	if got[2].Before != nil || !strings.Contains(got[2].Unkept, "undo keeps per turn") {
		t.Errorf("c past the bound: before %q, unkept %q", got[2].Before, got[2].Unkept)
	}
	if got[3].Unkept != "" || got[3].Existed {
		t.Errorf("a created file has no content to keep and stays undoable: %+v", got[3])
	}
}
