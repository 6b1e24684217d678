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
		OnRisk: {Run, Ask, Ask, Ask, Ask},
		Always: {Ask, Ask, Ask, Ask, Ask},
		Never:  {Run, Deny, Deny, Deny, Deny},
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
	for _, s := range []string{"on-risk", "always", "never"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	if _, err := Parse("sometimes"); err == nil {
		t.Error("Parse(sometimes) succeeded")
	}
	if !(Rank(OnRisk) < Rank(Always) && Rank(Always) < Rank(Never)) {
		t.Error("rank order wrong")
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
