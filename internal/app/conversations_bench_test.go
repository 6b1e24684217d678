package app

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/store"
)

func benchRegistry(b *testing.B) *delegation.Registry {
	b.Helper()
	st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(b.TempDir(), "scv.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if _, err := st.CreateSession(context.Background(), store.NewSession{ID: "s", Workspace: "/w", Origin: store.OriginTUI}); err != nil {
		b.Fatal(err)
	}
	return delegation.NewRegistry(delegation.RegistryOptions{Store: storeConversations{st}})
}

// BenchmarkConversationRegistryFresh is what SCV adds to a call that
// starts a conversation, on the SQLite store: the new conversation
// recorded (its session's list read, LRU checked, one row written).
func BenchmarkConversationRegistryFresh(b *testing.B) {
	r := benchRegistry(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, _, err := r.Start("s", "codex", "/w").Done(ctx, "th-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConversationRegistryFollowUp is what SCV adds to a call that
// continues one: the check at Plan (Peek), the turn taken at Run
// (Acquire) and recorded (Done), on the SQLite store with 8 conversations.
func BenchmarkConversationRegistryFollowUp(b *testing.B) {
	r := benchRegistry(b)
	ctx := context.Background()
	for i := range 8 {
		if _, _, err := r.Start("s", "codex", "/w").Done(ctx, "th-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := r.Peek(ctx, "s", "codex", "codex-3", ""); err != nil {
			b.Fatal(err)
		}
		l, err := r.Acquire(ctx, "s", "codex", "codex-3", "", "c")
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := l.Done(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
}
