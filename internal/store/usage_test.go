package store

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTurnCost: a turn's cache tokens and cost are stored and loaded, a
// turn without a price loads without one, and SessionUsage adds up every
// turn, summing the cost of those that had one.
func TestTurnCost(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	mustSession(t, s, "s2")
	cost := func(v float64) *float64 { return &v }
	end := func(sid, turn string, u Usage) {
		tl, err := s.BeginTurn(ctx, sid, turn, "p "+turn)
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.Complete(ctx, Completion{Usage: u, Answer: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	end("s1", "t1", Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100, CacheReadTokens: 800, CacheWriteTokens: 50, CostUSD: cost(0.0125)})
	end("s1", "t2", Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15})
	end("s1", "t3", Usage{InputTokens: 2000, OutputTokens: 10, TotalTokens: 2010, CostUSD: cost(0.0075)})

	l, err := s.Load(ctx, "s1", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Turns[0].Usage; got.CostUSD == nil || *got.CostUSD != 0.0125 || got.CacheReadTokens != 800 || got.CacheWriteTokens != 50 {
		t.Errorf("first turn's usage = %+v", got)
	}
	if got := l.Turns[1].Usage; got.CostUSD != nil {
		t.Errorf("a turn without a price loaded with cost %v", *got.CostUSD)
	}
	total, err := s.SessionUsage(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{InputTokens: 3010, OutputTokens: 115, TotalTokens: 3125, CacheReadTokens: 800, CacheWriteTokens: 50, CostUSD: cost(0.02)}
	if d := cmp.Diff(want, total); d != "" {
		t.Errorf("session usage (-want +got):\n%s", d)
	}
	none, err := s.SessionUsage(ctx, "s2")
	if err != nil || none != (Usage{}) {
		t.Errorf("session without turns: %+v, %v", none, err)
	}
	f, err := s.Fork(ctx, "s1", "t3", "s3", OriginTUI)
	if err != nil {
		t.Fatal(err)
	}
	forked, err := s.SessionUsage(ctx, f.ID)
	if err != nil || forked.CostUSD == nil || *forked.CostUSD != 0.0125 || forked.TotalTokens != 1115 {
		t.Errorf("fork before t3 keeps the cost of t1 and t2: %+v, %v", forked, err)
	}
}
