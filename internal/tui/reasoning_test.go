package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
)

// Reasoning streams dimmed above the answer, shows only its last lines,
// and folds to one line when the turn ends.
func TestReasoningShownDimmedAndCollapsed(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("How many r in strawberry?", "t1")
	var long []string
	for i := 1; i <= 12; i++ {
		long = append(long, "step "+strings.Repeat("x", i))
	}
	h.ev(&proto.AssistantReasoning{TurnHeader: th("t1"), Content: "Count the letters.\n"},
		&proto.AssistantReasoning{TurnHeader: th("t1"), Content: strings.Join(long, "\n")})
	h.golden("reasoning_streaming")
	var dimmed bool
	for _, l := range strings.Split(h.m.Render(), "\n") {
		if strings.Contains(ansi.Strip(l), "step xxxxxxxxxxxx") {
			dimmed = l != ansi.Strip(l)
		}
	}
	if !dimmed {
		t.Error("reasoning is not styled (dimmed)")
	}
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "There are **3**."},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "There are **3**."},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1})
	h.golden("reasoning_collapsed")
	frame := h.frame()
	if !strings.Contains(frame, "✻ thought (13 lines): Count the letters.") || strings.Contains(frame, "step x\n") {
		t.Errorf("collapsed reasoning not shown as one line:\n%s", frame)
	}
	if got := h.m.tr.items[len(h.m.tr.items)-1]; got.kind != kindAssistant || got.text != "There are **3**." {
		t.Errorf("last item = %+v, want the answer without reasoning", got)
	}
}
