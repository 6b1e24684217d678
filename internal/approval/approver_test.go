package approval

import (
	"context"
	"testing"

	"github.com/scv-agent/scv/internal/tool"
)

// TestApprover: the broker's approver answers a covered call from its
// grant or rule without announcing it, announces every other call (and a
// forced one, without an offer) and hands the waiting call Resolve's
// answer.
func TestApprover(t *testing.T) {
	b := NewBroker()
	rule, err := PrefixRule("bash", "go test", "c.toml:1")
	if err != nil {
		t.Fatal(err)
	}
	b.UseRules("/w", NewRuleBook("u", []Grant{rule}))
	b.AddRules([]Grant{{Tool: "bash", Command: "make", Source: "--allow"}})
	announced := map[string]Request{}
	ask := b.Approver(func(_ context.Context, id string, r Request) {
		announced[r.Summary] = r
		if err := b.Resolve(id, Answer{Approved: true, Session: r.Offer != nil}); err != nil {
			t.Errorf("Resolve(%s): %v", r.Summary, err)
		}
	})
	bash := func(cmd, forced string) Request {
		return Request{Name: "bash", Risk: tool.Process, Summary: cmd, Plan: tool.Plan{Risk: tool.Process, Command: cmd}, Forced: forced}
	}

	if a := ask(t.Context(), bash("go test ./...", "")); !a.Approved || a.GrantID != "u1" || a.Rule == nil || a.Rule.ID != "u1" {
		t.Errorf("a call the saved rule covers: %+v", a)
	}
	if a := ask(t.Context(), bash("make", "")); !a.Approved || a.GrantID != "r1" || a.Rule != nil {
		t.Errorf("a call the session's --allow rule covers: %+v", a)
	}
	if len(announced) != 0 {
		t.Fatalf("covered calls were announced: %v", announced)
	}

	a := ask(t.Context(), bash("ls -la", ""))
	r := announced["ls -la"]
	if !a.Approved || a.Granted == nil || r.Offer == nil || r.Call.Command != "ls -la" {
		t.Errorf("an asked call: answer %+v, request %+v", a, r)
	}
	a = ask(t.Context(), bash("go test ./x", "a hook asks"))
	r = announced["go test ./x"]
	if !a.Approved || a.Granted != nil || a.GrantID != "" || r.Offer != nil || r.Why != "a hook asks" {
		t.Errorf("a forced approval: answer %+v, request %+v", a, r)
	}

	ctx, cancel := context.WithCancel(t.Context())
	wait := b.Approver(func(context.Context, string, Request) { cancel() })
	if a := wait(ctx, bash("rm x", "")); a != (Answer{}) {
		t.Errorf("an approval whose context ended: %+v, want the zero Answer", a)
	}
}
