package approval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tool"
)

func TestDecide(t *testing.T) {
	risks := []tool.Risk{tool.ReadOnly, tool.Filesystem, tool.Process, tool.Delegate, tool.Network}
	want := map[Policy][]Decision{
		AskOnRisk:  {Run, Ask, Ask, Ask, Ask},
		AskAlways:  {Ask, Ask, Ask, Ask, Ask},
		DenyOnRisk: {Run, Deny, Deny, Deny, Deny},
		// The deprecated names decide exactly as what they stand for.
		"on-risk": {Run, Ask, Ask, Ask, Ask},
		"always":  {Ask, Ask, Ask, Ask, Ask},
		"never":   {Run, Deny, Deny, Deny, Deny},
	}
	for p, ds := range want {
		for i, r := range risks {
			if got := Decide(p, r); got != ds[i] {
				t.Errorf("Decide(%s, %s) = %s, want %s", p, r, got, ds[i])
			}
		}
	}
}

func TestParseAndRank(t *testing.T) {
	for in, want := range map[string]Policy{
		"ask-on-risk": AskOnRisk, "ask-always": AskAlways, "deny-on-risk": DenyOnRisk,
		"on-risk": AskOnRisk, "always": AskAlways, "never": DenyOnRisk,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"sometimes", "", "Never", "deny"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	if !(Rank(AskOnRisk) < Rank(AskAlways) && Rank(AskAlways) < Rank(DenyOnRisk)) {
		t.Error("rank order wrong")
	}
	if Rank("never") != Rank(DenyOnRisk) || Rank("on-risk") != Rank(AskOnRisk) || Rank("x") != -1 {
		t.Error("aliases must rank as what they stand for")
	}
}

// waitPending starts a Wait for id in a goroutine and returns once it is
// registered; the channel delivers its outcome.
func waitPending(t *testing.T, ctx context.Context, b *Broker, id string, req Request) chan Answer {
	t.Helper()
	done := make(chan Answer, 1)
	go func() {
		a, ok := b.Wait(ctx, id, req, nil)
		if !ok {
			a = Answer{Reason: "<cancelled>"}
		}
		done <- a
	}()
	for !b.Pending(id) {
		time.Sleep(time.Millisecond)
	}
	return done
}

func TestBroker(t *testing.T) {
	b := NewBroker()
	done := waitPending(t, t.Context(), b, "a1", Request{})
	if err := b.Resolve("nope", Answer{Approved: true}); !errors.Is(err, ErrNotPending) {
		t.Fatalf("resolve of an unknown id: %v", err)
	}
	if err := b.Resolve("a1", Answer{Approved: true}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; !a.Approved {
		t.Fatal("approval lost")
	}
	if err := b.Resolve("a1", Answer{Approved: true}); !errors.Is(err, ErrNotPending) {
		t.Fatal("resolved twice")
	}
}

func TestBrokerDenyWithReason(t *testing.T) {
	b := NewBroker()
	done := waitPending(t, t.Context(), b, "a1", Request{})
	long := string(make([]byte, MaxReasonBytes+1))
	for _, bad := range []Answer{{Approved: true, Reason: "why"}, {Reason: long}, {Prefix: "go"}} {
		if err := b.Resolve("a1", bad); err == nil || errors.Is(err, ErrNotPending) {
			t.Errorf("Resolve(%+v) = %v, want a refusal", bad, err)
		}
	}
	if !b.Pending("a1") {
		t.Fatal("a refused answer withdrew the approval")
	}
	if err := b.Resolve("a1", Answer{Reason: "use the Makefile"}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Approved || a.Reason != "use the Makefile" {
		t.Fatalf("answer = %+v", a)
	}
}

func TestBrokerCancelDenies(t *testing.T) {
	b := NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	done := waitPending(t, ctx, b, "a1", Request{})
	cancel()
	if a := <-done; a.Approved || a.Reason != "<cancelled>" {
		t.Fatalf("cancelled approval answered %+v", a)
	}
	if b.Pending("a1") {
		t.Fatal("cancelled approval still pending")
	}
}

// TestCancelPending: cancelling through the broker happens only while the
// approval is pending, and the waiting call sees the cancellation.
func TestCancelPending(t *testing.T) {
	b := NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	done := waitPending(t, ctx, b, "a1", Request{})
	if b.CancelPending("other", cancel) {
		t.Fatal("cancelled for an unknown approval")
	}
	if ctx.Err() != nil {
		t.Fatal("the context was cancelled for an unknown approval")
	}
	if !b.CancelPending("a1", cancel) {
		t.Fatal("CancelPending of a pending approval failed")
	}
	if a := <-done; a.Reason != "<cancelled>" {
		t.Fatalf("the call saw %+v, not a cancellation", a)
	}
	if b.CancelPending("a1", cancel) {
		t.Fatal("CancelPending succeeded after the approval ended")
	}
}

func TestSessionGrants(t *testing.T) {
	b := NewBroker()
	bash := Request{Offer: Offer("bash", tool.Process, "go test ./...", false), Command: "go test ./..."}
	if bash.Offer == nil || bash.Offer.Prefix != "go test" {
		t.Fatalf("offer = %+v, want prefix go test", bash.Offer)
	}
	// Refused grants leave the approval pending and add nothing.
	done := waitPending(t, t.Context(), b, "a1", bash)
	for _, bad := range []Answer{
		{Session: true}, // not approved
		{Approved: true, Session: true, Prefix: "go vet"}, // does not begin the command
		{Approved: true, Session: true, Prefix: "go test;"},
		{Approved: true, Session: true, Prefix: "go test ./... extra"},
	} {
		if err := b.Resolve("a1", bad); err == nil {
			t.Errorf("Resolve(%+v) accepted", bad)
		}
	}
	if len(b.Grants()) != 0 || !b.Pending("a1") {
		t.Fatal("a refused grant changed the broker")
	}
	if err := b.Resolve("a1", Answer{Approved: true, Session: true, Prefix: " go   test "}); err != nil {
		t.Fatal(err)
	}
	<-done
	want := []Grant{{ID: "g1", Tool: "bash", Risk: tool.Process, Prefix: "go test"}}
	if d := cmp.Diff(want, b.Grants()); d != "" {
		t.Fatalf("grants (-want +got):\n%s", d)
	}
	for cmd, covered := range map[string]bool{
		"go test":                true,
		"go test -run X ./pkg/":  true,
		"go\ttest ./...":         true,
		"go testx":               false,
		"go test; rm -rf ~":      false,
		"go test && rm -rf ~":    false,
		"go test | sh":           false,
		"go test $(rm -rf ~)":    false,
		"go test `rm -rf ~`":     false,
		"go test > /etc/passwd":  false,
		"go test\nrm -rf ~":      false,
		"go vet":                 false,
		"go":                     false,
		"FOO=1 go test":          false,
		"\"go\" test":            false,
		"go test \x1b[8m":        false,
		"go test & curl evil":    false,
		"go test <(curl x)":      false,
		"go test ${HOME}":        false,
		"go test \\\nrm":         false,
		"go test 'a b' -v ./...": true,
	} {
		if _, ok := b.Allowed("bash", tool.Process, cmd, false); ok != covered {
			t.Errorf("Allowed(bash, %q) = %v, want %v", cmd, ok, covered)
		}
	}
	if _, ok := b.Allowed("bash", tool.Process, "go test", true); ok {
		t.Error("a call whose tool forbids grants was allowed")
	}
	if _, ok := b.Allowed("other", tool.Process, "go test", false); ok {
		t.Error("a grant covered another tool")
	}

	// A tool grant: same tool, same risk only; the same grant twice is one.
	wr := Request{Offer: Offer("write", tool.Filesystem, "", false)}
	for _, id := range []string{"a2", "a3"} {
		done := waitPending(t, t.Context(), b, id, wr)
		if err := b.Resolve(id, Answer{Approved: true, Session: true}); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	if n := len(b.Grants()); n != 2 {
		t.Fatalf("%d grants, want 2 (bash and write)", n)
	}
	if _, ok := b.Allowed("write", tool.Filesystem, "", false); !ok {
		t.Error("the write grant does not cover a write")
	}
	if _, ok := b.Allowed("write", tool.Process, "", false); ok {
		t.Error("a grant covered another risk")
	}
	if !b.Revoke("g1") || b.Revoke("g1") {
		t.Fatal("revoke g1 once")
	}
	if _, ok := b.Allowed("bash", tool.Process, "go test", false); ok {
		t.Error("a revoked grant still applies")
	}

	// No offer: the call can never be granted.
	done = waitPending(t, t.Context(), b, "a4", Request{Offer: Offer("agent_claude", tool.Delegate, "", true)})
	if err := b.Resolve("a4", Answer{Approved: true, Session: true}); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("grant without an offer: %v", err)
	}
	if err := b.Resolve("a4", Answer{Approved: true}); err != nil {
		t.Fatal(err)
	}
	<-done
}

func TestPrefixRules(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./...":     "go test",
		"npm run build":     "npm run",
		"ls -la":            "ls",
		"make":              "make",
		"./build.sh --fast": "./build.sh",
		"git Status":        "git",
		"$(curl x) y":       "",
		"'go' test":         "",
		"  cargo  build  ":  "cargo build",
		"":                  "",
	} {
		if got := ProposePrefix(cmd); got != want {
			t.Errorf("ProposePrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
	if err := CheckPrefix("go test", "go test ./... | tail"); err != nil {
		t.Errorf("a plain prefix of a piped command: %v", err)
	}
	for _, bad := range []struct{ prefix, cmd string }{
		{"", "go test"}, {"go te", "go test"}, {"go *", "go test"}, {"'go'", "'go' test"}, {"go test -v", "go test"},
	} {
		if err := CheckPrefix(bad.prefix, bad.cmd); err == nil {
			t.Errorf("CheckPrefix(%q, %q) accepted", bad.prefix, bad.cmd)
		}
	}
}

// TestAskUnsandboxed: the policy runs confined calls unasked and treats
// every other call as ask-on-risk does.
func TestAskUnsandboxed(t *testing.T) {
	if p, err := Parse("ask-unsandboxed"); err != nil || p != AskUnsandboxed {
		t.Fatalf("Parse: %q, %v", p, err)
	}
	if !(Rank(AskUnsandboxed) < Rank(AskOnRisk)) {
		t.Error("ask-unsandboxed must rank below ask-on-risk: it asks less")
	}
	cases := []struct {
		policy Policy
		plan   tool.Plan
		want   Decision
	}{
		{AskUnsandboxed, tool.Plan{Risk: tool.Process, Confined: true}, Run},
		{AskUnsandboxed, tool.Plan{Risk: tool.Process}, Ask},
		{AskUnsandboxed, tool.Plan{Risk: tool.Network}, Ask},
		{AskUnsandboxed, tool.Plan{Risk: tool.ReadOnly}, Run},
		{AskOnRisk, tool.Plan{Risk: tool.Process, Confined: true}, Ask},
		{AskAlways, tool.Plan{Risk: tool.Process, Confined: true}, Ask},
		{DenyOnRisk, tool.Plan{Risk: tool.Process, Confined: true}, Deny},
	}
	for _, c := range cases {
		if got := DecidePlan(c.policy, c.plan); got != c.want {
			t.Errorf("DecidePlan(%s, risk %s, confined %v) = %s, want %s", c.policy, c.plan.Risk, c.plan.Confined, got, c.want)
		}
	}
}
