package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestPlanModeEndToEnd drives the real `scv` against `scv run` and the
// scripted fake model in a real terminal: Shift+Tab enters plan mode
// (the status bar says so), a write and a bash call of the model are
// refused without an approval panel while a read runs, the todo list is a
// checklist above the composer, and Shift+Tab then y carries out the plan:
// the default mode, the plan as the next prompt, and the write asked
// about and run.
func TestPlanModeEndToEnd(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	writeFile(t, ws, "a.txt", "alpha\n")
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"changed","mode":"replace"}`),
		modeltest.ToolCall("c2", "bash", `{"command":"touch made-by-bash"}`),
		modeltest.ToolCall("c3", "read", `{"path":"a.txt"}`),
		modeltest.ToolCall("c4", "todo_write", `{"todos":[{"content":"change a.txt","status":"in_progress"},{"content":"check it","status":"pending"}]}`))
	fake.Script(modeltest.Text("PLAN: replace a.txt with changed"))
	fake.Script(modeltest.ToolCall("c5", "write", `{"path":"a.txt","content":"changed","mode":"replace"}`))
	fake.Script(modeltest.Text("Plan carried out."))
	p := openTUI(t, scv, home, ws, fake, 100, 40)
	p.keys("BTab")
	p.waitFor("plan mode · ready")
	p.submit("plan the change")
	s := p.waitFor("PLAN: replace a.txt with changed", "Todo 0/2", "◐ change a.txt", "☐ check it", "plan mode · ready")
	if strings.Contains(s, "Approve this tool call?") {
		t.Errorf("an approval was asked in plan mode:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(ws, "made-by-bash")); err == nil {
		t.Error("the bash call ran in plan mode")
	}
	if got := readFile(ws, "a.txt"); got != "alpha\n" {
		t.Errorf("a.txt = %q after plan mode", got)
	}
	outs := callOutputs(fake.Requests()[1])
	for _, id := range []string{"c1", "c2"} {
		if !strings.HasPrefix(outs[id], "plan mode: read-only") {
			t.Errorf("the model saw %q for %s", outs[id], id)
		}
	}
	if !strings.Contains(outs["c3"], "alpha") {
		t.Errorf("the read in plan mode gave %q", outs["c3"])
	}

	// Leave plan mode and carry the plan out.
	p.keys("BTab")
	p.waitFor("Leave plan mode", "y carry it out")
	p.keys("y")
	p.waitFor("Approve this tool call?")
	if st := p.screen(); strings.Contains(st, "plan mode ·") {
		t.Errorf("still in plan mode while carrying out the plan:\n%s", st)
	}
	p.keys("y")
	p.waitFor("Plan carried out.", "ready")
	if got := readFile(ws, "a.txt"); got != "changed" {
		t.Errorf("a.txt = %q after the plan was carried out", got)
	}
	if in := fake.Requests()[2].InputItems(); !strings.Contains(lastUserText(in), "Carry out this plan:\n\nPLAN: replace a.txt with changed") {
		t.Errorf("the accepted plan's prompt was %q", lastUserText(in))
	}
}

// lastUserText is the text of the last user message of a Responses input.
func lastUserText(items []map[string]any) string {
	text := ""
	for _, it := range items {
		if it["role"] != "user" {
			continue
		}
		switch c := it["content"].(type) {
		case string:
			text = c
		case []any:
			for _, part := range c {
				if m, ok := part.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						text = s
					}
				}
			}
		}
	}
	return text
}
