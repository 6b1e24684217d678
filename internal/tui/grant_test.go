package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// askWith shows an approval of tool name with the offered grant and the
// server's reason.
func (h *harness) askWith(name, summary string, g *proto.Grant, reason string) {
	h.askDiff(name, summary, nil, g, reason)
}

// askDiff is askWith for a write with its diff.
func (h *harness) askDiff(name, summary string, d *proto.Diff, g *proto.Grant, reason string) {
	h.prompt("go on", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: name, Arguments: args(map[string]any{})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: name, Risk: riskOf(name), Cwd: "/w",
			Summary: summary, Diff: d, Grant: g, Reason: reason})
	h.rec.take()
}

func riskOf(name string) string {
	if name == "write" {
		return "filesystem"
	}
	return "process"
}

func sessionGrant(r proto.ApprovalResolve) *proto.ApprovalResolve {
	r.Envelope, r.SessionID, r.ApprovalID = proto.Envelope{RequestID: "tui-2"}, "s1", "a1"
	return &r
}

// TestGuardedWritePanel: a write no grant may cover shows the server's
// reason in the panel and offers no "a"; "a" says it cannot be granted.
func TestGuardedWritePanel(t *testing.T) {
	h := newHarness(t, nil)
	why := "`.git/config` is a guarded path, asked every time and never covered by a grant: git's config and hooks run commands (core.fsmonitor, hooks, aliases)"
	h.askWith("write", "replace .git/config (32 bytes)", nil, why)
	f := h.frame()
	assertContains(t, "the panel", f, "why:", "`.git/config` is a guarded path", "core.fsmonitor")
	if strings.Contains(f, "a allow") {
		t.Errorf("the panel offers a grant:\n%s", f)
	}
	h.keys(key('a'))
	if got := h.rec.take(); len(got) != 0 || h.m.approval == nil {
		t.Errorf("a on a guarded write sent %v or closed the panel", got)
	}
	// A short window keeps the reason on one line.
	h = newHarness(t, func(c *Config) { c.Width, c.Height = 60, 15 })
	h.askWith("write", "replace .git/config (32 bytes)", nil, why)
	if f := h.frame(); !strings.Contains(f, "why: `.git/config` is a guarded") {
		t.Errorf("the compact panel lacks the reason:\n%s", f)
	}
}

// TestPathGrantPanel: "a" on a write opens the offered directory to
// confirm or edit, like a command prefix; Enter sends the path.
func TestPathGrantPanel(t *testing.T) {
	h := newHarness(t, nil)
	h.askDiff("write", "create src/x/a.go (3 bytes)", &proto.Diff{Path: "src/x/a.go", Text: "--- /dev/null\n+++ b/src/x/a.go\n@@ -0,0 +1 @@\n+x\n", Added: 1},
		&proto.Grant{Tool: "write", Risk: "filesystem", Path: "src/x/"}, "")
	if f := h.frame(); !strings.Contains(f, "a allow writes under `src/x/` for this session") {
		t.Fatalf("the keys do not name the offered directory:\n%s", h.frame())
	}
	h.keys(key('a'))
	if f := h.frame(); !strings.Contains(f, "allow for this session the writes under") || !strings.Contains(f, "› src/x/█") {
		t.Fatalf("a did not open the path:\n%s", f)
	}
	h.keys(tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	h.keys(enter)
	want := sessionGrant(proto.ApprovalResolve{Approved: true, Scope: proto.ScopeSession, Path: "src"})
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Granted: &proto.Grant{GrantID: "g1", Tool: "write", Risk: "filesystem", Path: "src/"}})
	if f := h.frame(); !strings.Contains(f, "allowed for this session: write calls under `src/`, except guarded paths") {
		t.Errorf("the grant notice is wrong:\n%s", f)
	}
}

// TestExactCommandPanel: a command whose prefix does not cover it is
// granted with its exact command too; an emptied prefix grants the exact
// command only; an offer without a prefix (a shell) grants at once.
func TestExactCommandPanel(t *testing.T) {
	h := newHarness(t, nil)
	g := &proto.Grant{Tool: "bash", Risk: "process", Prefix: "echo", Command: "echo uxsess-$((40+2))"}
	h.askWith("bash", "echo uxsess-$((40+2))", g, "")
	h.keys(key('a'))
	h.keys(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}, enter)
	want := sessionGrant(proto.ApprovalResolve{Approved: true, Scope: proto.ScopeSession, Exact: true})
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Granted: &proto.Grant{GrantID: "g1", Tool: "bash", Risk: "process", Command: "echo uxsess-$((40+2))"}})
	if f := h.frame(); !strings.Contains(f, "allowed for this session: bash: exactly `echo uxsess-$((40+2))`") {
		t.Errorf("the exact grant notice is wrong:\n%s", f)
	}

	h = newHarness(t, nil)
	why := "`bash` is a shell, which runs any script it is given: no prefix is offered, a session grant covers this exact command only"
	h.askWith("bash", "bash -c 'echo hi'", &proto.Grant{Tool: "bash", Risk: "process", Command: "bash -c 'echo hi'"}, why)
	f := h.frame()
	assertContains(t, "the panel", f, "a allow this exact command for this session", "why:", "`bash` is a shell")
	h.keys(key('a'))
	want = sessionGrant(proto.ApprovalResolve{Approved: true, Scope: proto.ScopeSession})
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
}
