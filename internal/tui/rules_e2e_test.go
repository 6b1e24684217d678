package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestSaveRuleEndToEnd drives the real `scv` against `scv run`:
// "s" (always (save rule)) on a bash approval, the offered prefix `echo`
// confirmed, saves the rule to the user config (its comment kept) and
// says so; the model's next, identical-prefix call runs without a
// question, its row naming the rule; /approvals lists it; a new session
// (/new), which loads it from the file, is not asked either.
func TestSaveRuleEndToEnd(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo One"}`))
	fake.Script(modeltest.ToolCall("c2", "bash", `{"command":"echo Two"}`))
	fake.Script(modeltest.Text("Both ran."))
	fake.Script(modeltest.ToolCall("c3", "bash", `{"command":"echo Three"}`))
	fake.Script(modeltest.Text("Third ran."))
	writeConfig(t, home, fake.URL())
	appendConfig(t, home, "# my own note, kept\n")
	cfgPath := filepath.Join(home, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	p := attachTUI(t, scv, home, ws, 120, 40)
	p.submit("echo twice")
	p.answerApproval("s", "s always (save rule)")
	p.waitFor("allow always (a rule saved for this cwd) the bash commands starting with:", "› echo█")
	p.keys("Enter")
	s := p.waitFor("Both ran.", "saved rule: bash prefix `echo` → allow ("+cfgPath+":", "✓ allowed by the saved rule bash prefix `echo`", "ready")
	if n := strings.Count(s, "Approve this tool call?"); n != 0 {
		t.Errorf("the second echo was asked about:\n%s", s)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(after), string(before)) || !strings.Contains(string(after), "[[approvals.rules]]\ntool = \"bash\"\nprefix = \"echo\"\ndecision = \"allow\"\nworkspace = ") {
		t.Fatalf("the user config after saving:\n%s", after)
	}
	p.submit("/approvals")
	p.waitFor("saved rules (deny beats allow", "· bash prefix `echo` → allow ("+cfgPath+":")

	// A new session loads the rule from the file.
	p.submit("/new")
	p.waitFor("ready")
	p.submit("echo again")
	s = p.waitFor("Third ran.", "✓ allowed by the saved rule bash prefix `echo`", "ready")
	if strings.Contains(s, "Approve this tool call?") {
		t.Errorf("the new session asked:\n%s", s)
	}
	if out := callOutputs(fake.Requests()[len(fake.Requests())-1])["c3"]; !strings.Contains(out, "Three") {
		t.Errorf("the third call's output %q does not show it ran", out)
	}
	p.quit()
}
