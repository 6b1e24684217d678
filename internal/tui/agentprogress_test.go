package tui

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/proto"
)

// TestAgentProgressShowsLatestLine: a running delegated agent shows its
// latest step under the call, and nothing of it once the call ended.
func TestAgentProgressShowsLatestLine(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("delegate", "t1")
	h.ev(
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "a1", Name: "agent_codex", Arguments: args(map[string]any{"prompt": "fix the tests"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "a1", Name: "agent_codex"},
		&proto.ToolProgress{TurnHeader: th("t1"), CallID: "a1", Text: "$ ls -la"},
		&proto.ToolProgress{TurnHeader: th("t1"), CallID: "a1", Text: "$ go test …/agents/..."},
	)
	f := h.frame()
	if !strings.Contains(f, "│ $ go test …/agents/...") || strings.Contains(f, "$ ls -la") {
		t.Fatalf("running call's frame:\n%s", f)
	}
	h.ev(&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "a1", Name: "agent_codex", Success: true, Output: `{"agent":"codex","session":"codex-1","turn":1,"status":"completed","reply":"done"}`})
	if f := h.frame(); strings.Contains(f, "go test …/agents") {
		t.Errorf("progress stays after the call ended:\n%s", f)
	}
}
