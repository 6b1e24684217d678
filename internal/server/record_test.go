package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestStoreLateChanges: what a session.set_mode or session.configure
// changed while the session's first turn was being stored (in the agent and
// in its pending row, not in the copy BeginFirstTurn wrote) is stored once
// the session counts as stored: the mode, a new model, a new endpoint; and
// nothing is written when nothing changed.
func TestStoreLateChanges(t *testing.T) {
	ctx := context.Background()
	logs := &testutil.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	me := store.Holder{Instance: "/h", PID: 1, Start: 1, Name: "test"}
	st, err := store.Open(ctx, store.Options{Path: filepath.Join(t.TempDir(), "scv.db"), Holder: me})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	begin := func(id string) store.NewSession {
		t.Helper()
		n := store.NewSession{ID: id, Workspace: "/w", Provider: "openai", Model: "m1", WireAPI: "responses", BaseURL: "https://a", Origin: store.OriginExec, Mode: store.ModeDefault}
		if _, err := st.BeginFirstTurn(ctx, n, "t_1", "hi", nil); err != nil {
			t.Fatal(err)
		}
		return n
	}
	session := func(id string) store.Session {
		t.Helper()
		x, err := st.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}

	n := begin("s_same")
	before := session("s_same")
	storeLateChanges(ctx, st, log, "s_same", n, n, n.Mode)
	if after := session("s_same"); after.Updated != before.Updated {
		t.Errorf("nothing changed, but the session was written: updated %v → %v", before.Updated, after.Updated)
	}

	n = begin("s_mode_model")
	late := n
	late.Model = "m2"
	storeLateChanges(ctx, st, log, "s_mode_model", n, late, store.ModePlan)
	if x := session("s_mode_model"); x.Mode != store.ModePlan || x.Model != "m2" {
		t.Errorf("after a late set_mode and model change: mode %q, model %q; want plan, m2", x.Mode, x.Model)
	}

	n = begin("s_moved")
	late = n
	late.Provider, late.Model, late.WireAPI, late.BaseURL = "anthropic", "claude", "anthropic", "https://b"
	storeLateChanges(ctx, st, log, "s_moved", n, late, n.Mode)
	if x := session("s_moved"); x.Provider != "anthropic" || x.Model != "claude" || x.WireAPI != "anthropic" || x.BaseURL != "https://b" {
		t.Errorf("after a late move: %+v", x)
	}
	if logs.String() != "" {
		t.Errorf("unexpected errors logged:\n%s", logs)
	}
}
