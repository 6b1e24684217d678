package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// callOutputs are the function_call_output items of a recorded Responses
// request, by call id.
func callOutputs(r modeltest.Recorded) map[string]string {
	out := map[string]string{}
	for _, it := range r.InputItems() {
		if it["type"] == "function_call_output" {
			id, _ := it["call_id"].(string)
			s, _ := it["output"].(string)
			out[id] = s
		}
	}
	return out
}

// TestApprovalAnswersEndToEnd drives the real `scv` against the real
// `scv run` and the scripted fake model, in one session:
//
//  1. "a" on a bash approval, the offered prefix edited down to `echo`:
//     the next `echo` call of the model runs without a question, its row
//     says a session grant allowed it, and /approvals lists the grant;
//  2. "r" with a reason: the model's next request carries the reason in
//     the denied call's output;
//  3. Esc on an approval while the model would answer at once: the turn
//     is cancelled, no further request reaches the model, and no error is
//     shown.
func TestApprovalAnswersEndToEnd(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo grant-one"}`))
	fake.Script(modeltest.ToolCall("c2", "bash", `{"command":"echo grant-two"}`))
	fake.Script(modeltest.Text("Both echoes ran."))
	fake.Script(modeltest.ToolCall("c3", "bash", `{"command":"rm -rf build"}`))
	fake.Script(modeltest.Text("Understood, not removing it."))
	fake.Script(modeltest.ToolCall("c4", "bash", `{"command":"printf cancelled-call"}`))
	fake.Script(modeltest.Text("This answer must never be requested."))
	p := openTUI(t, scv, home, ws, fake, 100, 40)

	// 1. Allow for this session, with the prefix edited to `echo`.
	p.submit("echo twice")
	p.answerApproval("a", "a allow `echo grant-one …` for this session")
	p.waitFor("allow for this session the bash commands starting with:", "› echo grant-one")
	for range len(" grant-one") {
		p.keys("BSpace")
	}
	p.waitFor("› echo█")
	p.keys("Enter")
	s := p.waitFor("Both echoes ran.", "✓ allowed by a session grant", "ready")
	if strings.Contains(s, "Approve this tool call?") {
		t.Errorf("the second echo was asked about:\n%s", s)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d model requests after the first prompt, want 3", n)
	}
	if out := callOutputs(fake.Requests()[2])["c2"]; !strings.Contains(out, "grant-two") {
		t.Errorf("the granted call's output %q does not show it ran", out)
	}
	p.submit("/approvals")
	p.waitFor("1. bash commands starting with `echo` (risk process)")

	// 2. Deny with a reason the model reads.
	p.submit("clean up")
	p.answerApproval("r", "rm -rf build")
	p.waitFor("deny with a reason (the model reads it):")
	p.submit("use make clean instead")
	p.waitFor("Understood, not removing it.", "ready")
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests after the second prompt, want 5", len(reqs))
	}
	if out := callOutputs(reqs[4])["c3"]; !strings.Contains(out, "The user's reason: use make clean instead") {
		t.Errorf("the denied call's output the model got: %q", out)
	}

	// 3. Esc on an approval: one step denies and cancels; the model, which
	// would answer at once, is not asked again, and nothing is an error.
	p.submit("print it")
	p.waitFor("Approve this tool call?", "printf cancelled-call")
	p.keys("Escape")
	s = p.waitFor("turn cancelled", "[cancelled]", "ready")
	time.Sleep(500 * time.Millisecond) // room for a request that should not come
	if n := len(fake.Requests()); n != 6 {
		t.Errorf("%d model requests after Esc, want 6 (none after the cancelled approval)", n)
	}
	if n := fake.Pending(); n != 1 {
		t.Errorf("%d scripted responses left, want 1 (the one never requested)", n)
	}
	s = p.screen()
	for _, bad := range []string{"error (", "turn_not_found", "approval_not_found"} {
		if strings.Contains(s, bad) {
			t.Errorf("the screen shows %q after Esc:\n%s", bad, s)
		}
	}
	p.quit()
}

// TestGrantScopesEndToEnd drives the real `scv` against `scv run`:
//
//  1. "a" on a write of a.txt, the offered path (the workspace) confirmed:
//     the model's next write, of .git/config with a core.fsmonitor
//     command, is asked again, the panel says why in one line and offers
//     no grant, and the file is unchanged while asked and after "n";
//  2. "a" on `echo uxsess-$((40+2))`, the offered prefix confirmed: the
//     identical command runs without a question (the exact command is
//     always covered, though no prefix covers a substitution).
func TestGrantScopesEndToEnd(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	const original = "[core]\n\tbare = false\n"
	writeFile(t, ws, ".git/config", original)
	writeFile(t, ws, "a.txt", "old\n")
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"new\n","mode":"replace"}`))
	fake.Script(modeltest.ToolCall("c2", "write", `{"path":".git/config","content":"[core]\n\tfsmonitor = touch pwned\n","mode":"replace"}`))
	fake.Script(modeltest.Text("Config left alone."))
	fake.Script(modeltest.ToolCall("c3", "bash", `{"command":"echo uxsess-$((40+2))"}`))
	fake.Script(modeltest.ToolCall("c4", "bash", `{"command":"echo uxsess-$((40+2))"}`))
	fake.Script(modeltest.Text("Echoed twice."))
	p := openTUI(t, scv, home, ws, fake, 120, 40)

	p.submit("edit things")
	p.answerApproval("a", "a allow writes anywhere in the workspace for this session")
	p.waitFor("allow for this session the writes under", "› ./█")
	p.keys("Enter")
	s := p.waitFor("Approve this tool call?", "replace .git/config", "why:", "`.git/config` is a guarded path")
	if strings.Contains(s, "a allow") {
		t.Errorf("the guarded write offers a grant:\n%s", s)
	}
	if got := readFile(ws, ".git/config"); got != original {
		t.Fatalf(".git/config changed before its approval: %q", got)
	}
	p.keys("n")
	p.waitFor("Config left alone.", "ready")
	if got := readFile(ws, ".git/config"); got != original {
		t.Errorf(".git/config changed after its denial: %q", got)
	}
	if got := readFile(ws, "a.txt"); got != "new\n" {
		t.Errorf("a.txt = %q, want the approved write", got)
	}

	p.submit("echo twice")
	p.answerApproval("a", "a allow `echo …` for this session")
	p.waitFor("› echo█")
	p.keys("Enter")
	s = p.waitFor("Echoed twice.", "✓ allowed by a session grant", "ready")
	if strings.Count(s, "Approve this tool call?") != 0 {
		t.Errorf("the identical command was asked again:\n%s", s)
	}
	reqs := fake.Requests()
	if out := callOutputs(reqs[len(reqs)-1])["c4"]; !strings.Contains(out, "uxsess-42") {
		t.Errorf("the granted call's output %q does not show it ran", out)
	}
	p.quit()
}
