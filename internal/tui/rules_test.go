package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// TestSaveRuleKey: "s" confirms the offered prefix and sends scope rule
// (an emptied prefix sends nothing: a rule takes one); the saved rule is
// announced, a rule-approved call says which rule, and /approvals lists
// the rules after the grants.
func TestSaveRuleKey(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("test", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "go test ./..."})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "bash", Risk: "process", Cwd: "/home/ada/project",
			Summary: "go test ./...", Grant: &proto.Grant{Tool: "bash", Risk: "process", Prefix: "go test"}})
	h.rec.take()
	if f := h.frame(); !strings.Contains(f, "s always (save rule)") {
		t.Fatalf("the panel does not offer saving a rule:\n%s", f)
	}
	h.keys(key('s'))
	if f := h.frame(); !strings.Contains(f, "allow always (a rule saved for this cwd) the bash commands starting with:") || !strings.Contains(f, "› go test█") {
		t.Fatalf("the prefix is not confirmed first:\n%s", f)
	}
	h.keys(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}, enter)
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("an empty prefix sent %+v", got)
	}
	h.submit("go test")
	want := &proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", ApprovalID: "a1", Approved: true, Scope: proto.ScopeRule, Prefix: "go test"}
	if d := cmp.Diff([]any{want}, h.rec.take()); d != "" {
		t.Fatalf("sent (-want +got):\n%s", d)
	}
	rule := proto.Grant{GrantID: "s1", Tool: "bash", Risk: proto.AnyRisk, Prefix: "go test", Source: "/home/ada/.scv/config.toml:12", Decision: proto.DecisionAllow, Workspace: "/home/ada/project"}
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Granted: &rule},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: true, Output: "ok"},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "go test -run X"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c2", Name: "bash", GrantID: "s1", Rule: &rule})
	f := h.frame()
	for _, w := range []string{
		"saved rule: bash prefix `go test` → allow (/home/ada/.scv/config.toml:12) in",
		"✓ allowed by the saved rule bash prefix `go test` → allow",
		"(/home/ada/.scv/config.toml:12) in /home/ada/project",
	} {
		if !strings.Contains(f, w) {
			t.Errorf("the frame lacks %q:\n%s", w, f)
		}
	}
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 2})
	h.submit("/approvals")
	h.rec.take()
	h.ev(req("tui-3", &proto.ApprovalGrantsReply{Grants: []proto.Grant{}, Rules: []proto.Grant{rule,
		{GrantID: "u2", Tool: "bash", Risk: proto.AnyRisk, Prefix: "git push", Source: "/w/.scv/config.toml:1", Decision: proto.DecisionDeny}}}))
	f = h.frame()
	for _, w := range []string{"saved rules (deny beats allow", "· bash prefix `git push` → deny (/w/.scv/config.toml:1)"} {
		if !strings.Contains(f, w) {
			t.Errorf("/approvals lacks %q:\n%s", w, f)
		}
	}
}

// TestDomainGrantText: a web_fetch grant names its host in the panel and
// in /approvals.
func TestDomainGrantText(t *testing.T) {
	g := proto.Grant{Tool: "web_fetch", Risk: "network", Domain: "pkg.go.dev"}
	if got := offerText(g); got != "fetches from `pkg.go.dev`" {
		t.Errorf("offerText = %q", got)
	}
	if got := grantText(g); got != "web_fetch calls to `pkg.go.dev` (risk network)" {
		t.Errorf("grantText = %q", got)
	}
}
