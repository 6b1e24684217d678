package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestAgentConversations(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "scv.db"), nil)
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, NewSession{ID: id, Workspace: "/w", Origin: OriginTUI}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := AgentConversation{SessionID: "s1", Handle: "codex-1", Agent: "codex", N: 1, Cwd: "/w", VendorID: "th-1", Turns: 1, Created: at, Used: at}
	b := AgentConversation{SessionID: "s2", Handle: "claude-1", Agent: "claude", N: 1, Cwd: "/w/x", VendorID: "u-1", Turns: 3, Created: at, Used: at.Add(time.Hour)}
	for _, c := range []AgentConversation{a, b} {
		if err := s.PutAgentConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// Replaced in place: a second turn, then closed.
	a.Turns, a.Used = 2, at.Add(time.Minute)
	if err := s.PutAgentConversation(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.Closed, a.ClosedWhy, a.VendorID = at.Add(2*time.Minute), "evicted", ""
	if err := s.PutAgentConversation(ctx, a); err != nil {
		t.Fatal(err)
	}
	eq := []cmp.Option{cmpopts.EquateApproxTime(0)}
	if got, err := s.AgentConversations(ctx, "s1"); err != nil || !cmp.Equal(got, []AgentConversation{a}, eq...) {
		t.Errorf("s1 = %+v, %v; want %+v", got, err, a)
	}
	if got, err := s.AgentConversations(ctx, ""); err != nil || !cmp.Equal(got, []AgentConversation{a, b}, eq...) {
		t.Errorf("all = %+v, %v", got, err)
	}
	// A conversation of a session that is not stored is refused.
	if err := s.PutAgentConversation(ctx, AgentConversation{SessionID: "nope", Handle: "pi-1", Agent: "pi", Cwd: "/"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("put for a missing session: %v, want ErrNotFound", err)
	}
	// They go with their session.
	if err := s.Delete(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.AgentConversations(ctx, ""); err != nil || len(got) != 1 || got[0].Handle != "codex-1" {
		t.Errorf("after deleting s2: %+v, %v", got, err)
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM agent_conversations`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d rows left after the delete (%v), want 1", n, err)
	}
}
