package e2e

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// chatToolOutput is the tool message the model was sent for callID on the
// Chat Completions wire.
func chatToolOutput(r modeltest.Recorded, callID string) (string, bool) {
	for _, m := range r.Messages() {
		if m["role"] == "tool" && m["tool_call_id"] == callID {
			s, _ := m["content"].(string)
			return s, true
		}
	}
	return "", false
}

// The same three-step loop as TestExecToolLoop over wire_api = "chat": the
// binary speaks /chat/completions, replays the assistant's tool_calls and
// the tool messages, and prints the final answer.
func TestExecToolLoopChatWire(t *testing.T) {
	fm := modeltest.New(t)
	scriptToolLoop(fm)
	in := newInstance(t, providerConfig(fm.URL(), `wire_api = "chat"`))
	r := in.runOK(in.env, "", "exec", "--yes", "run the loop")
	if diff := cmp.Diff("All done.\n", r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	reqs := modelRequests(t, fm, 3)
	for i, req := range reqs {
		if req.Wire() != "chat" {
			t.Fatalf("request %d went to %s, want /chat/completions", i, req.Path)
		}
	}
	if names := reqs[0].ToolNames(); !cmp.Equal(names, []string{"read", "write", "bash", "todo_write", "web_fetch"}) {
		t.Errorf("tools offered = %v", names)
	}
	if out, ok := chatToolOutput(reqs[1], "c1"); !ok || !strings.Contains(out, "hi-from-bash") {
		t.Errorf("bash result sent = %q (present %v)", out, ok)
	}
	if out, ok := chatToolOutput(reqs[2], "c2"); !ok || !strings.Contains(out, "hello from a.txt") {
		t.Errorf("read result sent = %q (present %v)", out, ok)
	}
	if reqs[0].HasHostedWebSearch() {
		t.Error("hosted web_search offered on the chat wire")
	}
}
