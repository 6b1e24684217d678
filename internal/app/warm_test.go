package app

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"charm.land/catwalk/pkg/catwalk"

	"github.com/scv-agent/scv/internal/catalog"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/store"
)

// TestWarmDecodesForTheActiveProfileOnly: Warm decodes the catalogue when
// the active profile's endpoint is one the catalogue could know (https), and
// not for a local endpoint, even though other profiles of the configuration
// (the built-in anthropic one) are served: a process whose sessions talk to
// a local model never pays the ≈ 20 ms of CPU.
func TestWarmDecodesForTheActiveProfileOnly(t *testing.T) {
	for _, tt := range []struct {
		name, cfg string
		loads     int64
	}{
		{"local endpoint", "", 0},
		{"https endpoint", "[provider]\nactive = \"remote\"\n[providers.remote]\nbase_url = \"https://api.openai.com/v1\"\napi_key_env = \"OPENAI_API_KEY\"\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			var loads atomic.Int64
			f.app.catalog = catalog.New(catalog.Options{Providers: func() []catwalk.Provider {
				loads.Add(1)
				return nil
			}})
			loaded, err := f.app.LoadConfig(f.ws, NoOverrides)
			if err != nil {
				t.Fatal(err)
			}
			f.app.Warm(&loaded.Config)
			f.app.Close() // waits for what Warm started
			if got := loads.Load(); got != tt.loads {
				t.Errorf("catalogue decoded %d times, want %d", got, tt.loads)
			}
		})
	}
}

// TestOpenStoreAside: the database opened in the background can be used
// at once: its methods wait for the opening, which recovered the database
// first (the running turn of a process that died is interrupted before the
// caller reads it), and closing it gives the lease back; a database that
// cannot be opened fails StoreReady, and every method, naming it, and
// closes quietly.
func TestOpenStoreAside(t *testing.T) {
	ctx := context.Background()
	layout := paths.Layout{Home: t.TempDir()}
	logger := slog.New(slog.DiscardHandler)

	// A turn left running by a process of this home that is gone.
	dead := store.Holder{Instance: layout.Home, PID: 1 << 22, Start: 1, Name: "scv exec"}
	prev, err := store.Open(ctx, store.Options{Path: layout.Database(), Holder: dead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prev.BeginFirstTurn(ctx, store.NewSession{ID: "s_dead", Workspace: t.TempDir(), Origin: store.OriginExec}, "t_1", "hi", nil); err != nil {
		t.Fatal(err)
	}
	prev.Close()

	st, err := OpenStoreAside(ctx, layout, "scv test", true, logger)
	if err != nil {
		t.Fatal(err)
	}
	if turn, err := st.Turn(ctx, "s_dead", "t_1"); err != nil || turn.State != store.TurnInterrupted {
		t.Errorf("the dead process's turn, read while the store opened: %+v, %v; want interrupted", turn, err)
	}
	if _, err := st.CreateSession(ctx, store.NewSession{ID: "s_aside", Workspace: t.TempDir(), Origin: store.OriginExec}); err != nil {
		t.Fatalf("a store still opening: %v", err)
	}
	if err := StoreReady(ctx, st); err != nil {
		t.Fatal(err)
	}
	CloseStore(st, logger)
	check, err := store.Open(ctx, store.Options{Path: layout.Database()})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	s, err := check.Session(ctx, "s_aside")
	if err != nil {
		t.Fatal(err)
	}
	if s.Lease != nil {
		t.Errorf("the session is still leased to %+v after the store closed", *s.Lease)
	}

	// A database path that is a directory cannot be opened.
	bad := paths.Layout{Home: t.TempDir()}
	if err := os.MkdirAll(bad.Database(), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err = OpenStoreAside(ctx, bad, "scv test", true, logger)
	if err != nil {
		t.Fatal(err)
	}
	err = StoreReady(ctx, st)
	if err == nil || !strings.Contains(err.Error(), bad.Database()) || !strings.Contains(err.Error(), "runs none without it") {
		t.Errorf("StoreReady of an unopenable database: %v, want its path and what it means", err)
	}
	if _, err := st.Session(ctx, "s_aside"); err == nil {
		t.Error("a method of a store that could not be opened succeeded")
	}
	CloseStore(st, logger)
}
