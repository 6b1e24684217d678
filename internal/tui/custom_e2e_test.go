package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestCustomCommandUnderTmux: the user's ~/.scv/commands/review.md and
// the workspace's .scv/commands/lint.md appear in the slash menu (the
// workspace's marked (repo)); /review ARGS sends the file's text with the
// arguments in place of $ARGUMENTS to the model, and the transcript shows
// what was typed.
func TestCustomCommandUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	writeFile(t, home, "commands/review.md", "# Review a file carefully\nReview $ARGUMENTS and list the bugs you find.\n")
	writeFile(t, ws, ".scv/commands/lint.md", "Lint the whole tree\nRun the linters and fix what they report.\n")
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("Reviewed: no bugs."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.text("/")
	p.waitFor("/model", "tab complete")
	p.keys("Up") // the selection wraps to the last entry: a custom command
	p.waitFor("▸ /review [args]", "Review a file carefully")
	p.keys("BSpace")
	p.text("/l")
	p.waitFor("/lint [args]", "(repo) Lint the whole tree")
	p.keys("BSpace", "BSpace")
	p.submit("/review src/main.go")
	s := p.waitFor("Reviewed: no bugs.", "ready")
	if !strings.Contains(s, "› /review src/main.go") {
		t.Errorf("the transcript does not show the command as typed:\n%s", s)
	}
	want := "# Review a file carefully\nReview src/main.go and list the bugs you find.\n"
	if got := lastUserTexts(fake); len(got) != 1 || got[0] != want {
		t.Errorf("the model got the user messages %q, want the expanded command %q", got, want)
	}
	p.quit()
}

// TestInitAndCompactUnderTmux: /init asks the model to write AGENTS.md,
// whose write waits for the user's approval like any other; /compact FOCUS
// then has the model summarise the conversation (the focus in the
// request), shows the token estimate before and after, and the next
// prompt is sent with the summary in place of the earlier turns.
func TestInitAndCompactUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	writeFile(t, ws, "go.mod", "module example.com/x\n")
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "write", `{"path":"AGENTS.md","mode":"create","content":"# Agents\n\nRun go test ./...\n"}`))
	fake.Script(modeltest.Text("Wrote AGENTS.md for this Go module."))
	fake.Script(modeltest.Text("SUMMARY-OK: AGENTS.md was written."))
	fake.Script(modeltest.Text("Next answer."))
	p := openTUI(t, scv, home, ws, fake, 100, 40)

	p.submit("/init")
	p.waitFor("Approve this tool call?", "AGENTS.md")
	if _, err := os.Stat(filepath.Join(ws, "AGENTS.md")); !os.IsNotExist(err) {
		t.Fatalf("AGENTS.md exists before the write was approved (%v)", err)
	}
	p.keys("y")
	s := p.waitFor("Wrote AGENTS.md for this Go module.", "ready")
	if !strings.Contains(s, "› /init") {
		t.Errorf("the transcript does not show /init:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "AGENTS.md")); err != nil || string(b) != "# Agents\n\nRun go test ./...\n" {
		t.Errorf("AGENTS.md after the approved write: %q, %v", b, err)
	}
	if got := firstUserText(fake, 0); !strings.Contains(got, "AGENTS.md") || !strings.Contains(got, "improve it") {
		t.Errorf("the /init prompt sent was %q", got)
	}

	p.submit("/compact the agents file")
	p.waitFor("conversation compacted:", "messages replaced by the model's summary")
	reqs := fake.Requests()
	if got := string(reqs[2].Raw); !strings.Contains(got, "compact this conversation") || !strings.Contains(got, "focus on: the agents file") {
		t.Errorf("the compaction request does not hold the compaction prompt and the focus: %.400s", got)
	}
	p.submit("what next?")
	p.waitFor("Next answer.", "ready")
	got := lastUserTexts(fake)
	if len(got) != 2 || !strings.Contains(got[0], "SUMMARY-OK") || got[1] != "what next?" {
		t.Errorf("after /compact the model got the user messages %q; want the summary note, then the prompt", got)
	}
	p.quit()
}

// firstUserText is the first user message of request i.
func firstUserText(fake *modeltest.Server, i int) string {
	for _, it := range fake.Requests()[i].InputItems() {
		if it["role"] == "user" {
			if s, ok := it["content"].(string); ok {
				return s
			}
		}
	}
	return ""
}
