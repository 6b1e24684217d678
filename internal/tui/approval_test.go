package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

const mainDiff = "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,6 @@\n package main\n \n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n+\tprintln(\"world\")\n }\n"

// writeFlow shows the approval of a write that replaces main.go.
func (h *harness) writeFlow() {
	h.prompt("greet better", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "write", Arguments: args(map[string]any{"path": "main.go", "mode": "replace"})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "write", Risk: "filesystem", Cwd: "/home/ada/project",
			Summary: "replace main.go (61 bytes)",
			Diff:    &proto.Diff{Path: "main.go", Text: mainDiff, Added: 2, Removed: 1},
			Grant:   &proto.Grant{Tool: "write", Risk: "filesystem"}})
	h.rec.take()
}

// bashFlow shows the approval of a bash command with a prefix offer.
func (h *harness) bashFlow(command string) {
	h.prompt("run the tests", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": command})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "bash", Risk: "process", Cwd: "/home/ada/project",
			Summary: command + "\n(in /home/ada/project, timeout 600 s)", Grant: &proto.Grant{Tool: "bash", Risk: "process", Prefix: "go test"}})
	h.rec.take()
}

// TestDiffPanel: a write's approval shows the diff, coloured by line
// kind; after the call the row shows the stat and Ctrl+O the diff.
func TestDiffPanel(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 30 })
	h.writeFlow()
	h.golden("approval_diff")
	raw := h.m.Render()
	for _, want := range []string{"\x1b[92m+\tprintln(\"world\")", "\x1b[91m-\tprintln(\"hi\")", "\x1b[96m@@ -1,5 +1,6 @@"} {
		want = strings.ReplaceAll(want, "\t", "    ")
		if !strings.Contains(raw, want) {
			t.Errorf("the frame lacks the coloured line %q", want)
		}
	}
	h.keys(key('y'))
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Summary: "replace main.go (61 bytes)"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Success: true, Output: `{"path":"main.go","bytes":61,"sha256":"ab"}`})
	if f := h.frame(); !strings.Contains(f, "± main.go +2 −1 · ctrl+o to show the diff") {
		t.Errorf("the completed row does not show the diff stat:\n%s", f)
	}
	h.keys(ctrlO)
	h.golden("write_diff_expanded")
	h.keys(ctrlO)
	if strings.Contains(h.frame(), "println(\"world\")") {
		t.Error("Ctrl+O did not collapse the diff")
	}
}

// TestLongDiffScrolls: a diff longer than the panel shows a window with
// its size, and ↑/↓ reach its last line and its "+N more lines".
func TestLongDiffScrolls(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("rewrite", "t1")
	var b strings.Builder
	b.WriteString("--- a/big.txt\n+++ b/big.txt\n@@ -1,40 +1,40 @@\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "+line %02d\n", i)
	}
	h.ev(&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "write", Risk: "filesystem", Cwd: "/w",
		Summary: "replace big.txt (400 bytes)", Diff: &proto.Diff{Path: "big.txt", Text: b.String(), Added: 4000, Removed: 40, Omitted: 3960}})
	f := h.frame()
	if !strings.Contains(f, "diff:    big.txt +4000 −40 · 44 lines, showing 1–") {
		t.Fatalf("the panel does not say how long the diff is:\n%s", f)
	}
	for range 60 {
		h.keys(down)
	}
	f = h.frame()
	assertContains(t, "scrolled to the end, the panel", f, "+line 40", "… +3960 more lines", "–44 ·")
}

// TestScopedApproval: "a" on a command offers the prefix to confirm or
// edit; Enter sends the grant; the prefix editor and the reason editor
// take typed and pasted text; Esc goes back to the choices.
func TestScopedApproval(t *testing.T) {
	h := newHarness(t, nil)
	h.bashFlow("go test ./internal/...")
	h.golden("approval_scoped")
	h.keys(key('a'))
	h.golden("approval_prefix")
	h.keys(tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace},
		tea.KeyPressMsg{Code: tea.KeyBackspace})
	h.submit("test ./internal/...")
	want := &proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", ApprovalID: "a1", Approved: true,
		Scope: proto.ScopeSession, Prefix: "go test ./internal/..."}
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if h.m.approval != nil {
		t.Error("the panel is still shown")
	}
	// The server refuses the prefix: the panel comes back, with the error,
	// and no grant is announced.
	h.ev(req("tui-2", &proto.Error{Code: proto.ErrInvalidRequest, Message: "approval.resolve: the prefix word ..."}))
	if h.m.approval == nil || h.m.approval.mode != modeChoose {
		t.Fatalf("a refused answer did not bring the panel back: %+v", h.m.approval)
	}
	if f := h.frame(); strings.Contains(f, "allowed for this session") {
		t.Errorf("a refused grant was announced:\n%s", f)
	}

	// Deny with a reason; Esc in the editor goes back, pasted text is one line.
	h.keys(key('r'))
	h.typeText("no")
	h.keys(esc)
	if h.m.approval == nil || h.m.approval.mode != modeChoose {
		t.Fatal("esc in the reason editor did not go back to the choices")
	}
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("esc in an editor sent %v", got)
	}
	h.keys(key('r'))
	h.typeText("use make test")
	h.m.Update(tea.PasteMsg{Content: ",\nit sets the tags"})
	h.golden("approval_reason")
	h.keys(enter)
	want = &proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", ApprovalID: "a1", Reason: "use make test, it sets the tags"}
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if got := h.m.tr.tools["c1"].state; got != toolDenied {
		t.Errorf("row state %v, want denied", got)
	}
}

// TestToolGrant: "a" on a call without a prefix grants at once; a call
// without an offer cannot be granted.
func TestToolGrant(t *testing.T) {
	h := newHarness(t, nil)
	h.writeFlow()
	h.keys(key('a'))
	want := &proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", ApprovalID: "a1", Approved: true, Scope: proto.ScopeSession}
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if strings.Contains(h.frame(), "allowed for this session") {
		t.Error("the grant was announced before the server took it")
	}
	// A later write runs under the grant: its row says so and keeps the diff.
	// The server's tool.started says what the answer granted.
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Granted: &proto.Grant{GrantID: "g1", Tool: "write", Risk: "filesystem"}},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Success: true, Output: "{}"},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c2", Name: "write", Arguments: args(map[string]any{"path": "b.go"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c2", Name: "write", Summary: "create b.go (3 bytes)", GrantID: "g1",
			Diff: &proto.Diff{Path: "b.go", Text: "--- /dev/null\n+++ b/b.go\n@@ -0,0 +1 @@\n+b\n", Added: 1}})
	f := h.frame()
	assertContains(t, "the granted row", f, "allowed for this session: write calls (risk filesystem)", "✓ allowed by a session grant", "± b.go +1 −0 · ctrl+o to show the diff", "↳ create b.go (3 bytes)")

	h = newHarness(t, nil)
	h.approvalFlow() // no grant offered
	h.keys(key('a'))
	if got := h.rec.take(); len(got) != 0 || h.m.approval == nil {
		t.Errorf("a without an offer sent %v or closed the panel", got)
	}
}

// TestEscIsQuietAboutEndedTurns: Esc with an approval sends one
// deny-and-cancel; when the approval or the turn already ended, the
// answers are not shown as errors; a leftover running turn is cancelled.
func TestEscIsQuietAboutEndedTurns(t *testing.T) {
	h := newHarness(t, nil)
	h.approvalFlow()
	h.keys(esc)
	h.rec.take()
	h.ev(req("tui-2", &proto.Error{Code: proto.ErrApprovalNotFound, Message: "no pending approval"}))
	// The turn still runs (its events have not come yet): it is cancelled.
	if d := cmp.Diff([]any{cancel("tui-3")}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-3", &proto.Error{Code: proto.ErrTurnNotFound, Message: "no active or queued turn"}),
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1})
	if f := h.frame(); strings.Contains(f, "error") || strings.Contains(f, "not_found") {
		t.Errorf("an ended turn was reported as an error:\n%s", f)
	}
	// Other errors still show.
	h.ev(req("tui-9", &proto.Error{Code: proto.ErrTurnNotFound, Message: "someone else's"}))
	if !strings.Contains(h.frame(), "error (turn_not_found)") {
		t.Error("an error for another request was swallowed")
	}
}

// TestApprovalsCommand: /approvals lists the grants; /approvals revoke N
// revokes one by its number in the list; bad arguments say how to use it.
func TestApprovalsCommand(t *testing.T) {
	h := newHarness(t, nil)
	h.submit("/approvals")
	if d := cmp.Diff([]any{&proto.ApprovalGrantsRequest{Envelope: proto.Envelope{RequestID: "tui-1"}, SessionID: "s1"}}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	grants := []proto.Grant{{GrantID: "g1", Tool: "bash", Risk: "process", Prefix: "go test"}, {GrantID: "g2", Tool: "write", Risk: "filesystem"}}
	h.ev(req("tui-1", &proto.ApprovalGrantsReply{Grants: grants}))
	h.golden("approvals_list")
	h.submit("/approvals revoke 2")
	if d := cmp.Diff([]any{&proto.ApprovalRevoke{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", GrantID: "g2"}}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.ApprovalGrantsReply{Grants: grants[:1]}))
	h.submit("/approvals revoke 5")
	h.submit("/approvals forget")
	f := h.frame()
	assertContains(t, "frame", f, `no grant "5" in the last list (1 grants)`, "usage: /approvals lists")
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("bad /approvals commands sent %v", got)
	}
	h.submit("/approvals revoke all")
	if d := cmp.Diff([]any{&proto.ApprovalRevoke{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", GrantID: "g1"}}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-3", &proto.ApprovalGrantsReply{Grants: []proto.Grant{}}))
	if !strings.Contains(h.frame(), "no session grants") {
		t.Errorf("the empty list is not shown:\n%s", h.frame())
	}
}

// TestDiffEscapesShownNotObeyed: file content quoted by a diff is as
// untrusted as tool output; its escape sequences are shown, in the panel
// and on the expanded row.
func TestDiffEscapesShownNotObeyed(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("edit", "t1")
	text := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new \x1b[8mhidden\x1b[0m \x1b]0;title\x07\n"
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "write"},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "write", Risk: "filesystem", Cwd: "/w",
			Summary: "replace x (20 bytes)", Diff: &proto.Diff{Path: "x\x1b[2J", Text: text, Added: 1, Removed: 1, Note: "n\x1b[8m"}})
	noActiveControls(t, "diff panel", h.m.Render())
	if !strings.Contains(h.frame(), "+new ␛[8mhidden␛[0m") {
		t.Errorf("the hidden text is not shown:\n%s", h.frame())
	}
	h.keys(key('y'))
	h.ev(&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Success: true, Output: "{}"})
	h.keys(ctrlO)
	noActiveControls(t, "expanded diff", h.m.Render())
}
