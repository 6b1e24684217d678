package approval

import (
	"context"
	"testing"
	"time"

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

func TestBroker(t *testing.T) {
	b := NewBroker()
	done := make(chan bool)
	go func() { done <- b.Wait(t.Context(), "a1", nil) }()
	for !b.Pending("a1") {
		time.Sleep(time.Millisecond)
	}
	if b.Resolve("nope", true) {
		t.Fatal("resolved an unknown id")
	}
	if !b.Resolve("a1", true) {
		t.Fatal("resolve failed")
	}
	if !<-done {
		t.Fatal("approval lost")
	}
	if b.Resolve("a1", true) {
		t.Fatal("resolved twice")
	}
}

func TestBrokerCancelDenies(t *testing.T) {
	b := NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan bool)
	go func() { done <- b.Wait(ctx, "a1", nil) }()
	for !b.Pending("a1") {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if <-done {
		t.Fatal("cancelled approval approved")
	}
	if b.Pending("a1") {
		t.Fatal("cancelled approval still pending")
	}
}
