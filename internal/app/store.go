package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/version"
)

// OpenStore opens the instance's session database ($SCV_HOME/state/scv.db,
// docs/store.md). A process that serves sessions names itself (name:
// "daemon", "scv exec", ...): it holds the leases of the sessions it has
// open, and Recover marks the turns of dead processes interrupted. A
// process that only reads or deletes (scv sessions) passes "" and holds
// nothing.
func OpenStore(ctx context.Context, layout paths.Layout, name string, logger *slog.Logger) (*store.Store, error) {
	st, err := store.Open(ctx, storeOptions(layout, name, logger))
	if err != nil {
		return nil, fmt.Errorf("%w (SCV keeps every session there and runs none without it)", err)
	}
	if name != "" {
		if _, err := st.Recover(ctx); err != nil {
			st.Close()
			return nil, fmt.Errorf("recover the session database: %w", err)
		}
	}
	return st, nil
}

// storeOptions are the store options of the instance's database opened as
// name: its lease names this process unless name is "".
func storeOptions(layout paths.Layout, name string, logger *slog.Logger) store.Options {
	var me store.Holder
	if name != "" {
		pid := os.Getpid()
		start, err := proc.StartTime(pid)
		if err != nil {
			logger.Warn("cannot read this process's start time; leases name the pid alone", "err", err)
		}
		me = store.Holder{Instance: layout.Home, PID: pid, Start: int64(start), Name: name}
	}
	return store.Options{
		Path: layout.Database(), Holder: me, Logger: logger,
		Alive: func(h store.Holder) bool {
			if h.Instance != layout.Home {
				return false // not a process of this home: nothing can hold its sessions
			}
			return proc.Alive(h.PID, uint64(h.Start))
		},
	}
}

// OpenStoreAside is OpenStore in the background (store.OpenAsync), for a
// process whose next steps (building its app, reading its configuration,
// starting a session in memory) do not need the database: opening it is
// the longest step before a first turn (≈ 3–5 ms), and it then overlaps
// them. The Store it returns can be handed to a server at once: its
// methods wait for the opening, and Recover runs before any of theirs.
// StoreReady says how the opening ended; CloseStore closes it either way.
// An error here is one found before anything was opened (a database path
// that cannot be made absolute).
//
// warm makes it WarmUp once open, for a process about to run a turn (scv
// exec, scv acp, the TUI without a daemon); OpenStore never does: an idle
// daemon would hold the connection and the statements for nothing
// (≈ 1.6 MiB).
func OpenStoreAside(ctx context.Context, layout paths.Layout, name string, warm bool, logger *slog.Logger) (*store.Store, error) {
	return store.OpenAsync(ctx, storeOptions(layout, name, logger), func(ctx context.Context, st *store.Store) error {
		if name == "" {
			return nil
		}
		if _, err := st.Recover(ctx); err != nil {
			return fmt.Errorf("recover the session database: %w", err)
		}
		if warm {
			st.WarmUp()
		}
		return nil
	})
}

// StoreReady waits for st, from OpenStoreAside, to be open, and says why it
// could not be, worded as OpenStore's errors.
func StoreReady(ctx context.Context, st *store.Store) error {
	if err := st.Err(ctx); err != nil {
		return fmt.Errorf("%w (SCV keeps every session there and runs none without it)", err)
	}
	return nil
}

// CloseStore gives back this process's leases and closes the database.
func CloseStore(st *store.Store, logger *slog.Logger) {
	// The opening of an OpenStoreAside store ends when its context does
	// or its statements' busy timeouts run out (one per Recover write);
	// waiting for it is what lets its leases be given back.
	if st.Err(context.Background()) != nil {
		st.Close() // never opened: no lease to give back
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.ReleaseAll(ctx); err != nil {
		logger.Warn("store: release sessions", "err", err)
	}
	if err := st.Close(); err != nil {
		logger.Warn("store: close", "err", err)
	}
}

// Retention is the [history] configuration as prune options.
func Retention(h config.History) store.PruneOptions {
	return store.PruneOptions{MaxSessions: h.MaxSessions, MaxAge: time.Duration(h.MaxAgeDays) * 24 * time.Hour}
}

// prune applies the [history] limits at daemon start (docs/store.md).
func prune(ctx context.Context, st *store.Store, h config.History, logger *slog.Logger) {
	n, err := st.Prune(ctx, Retention(h))
	if err != nil {
		logger.Warn("store: prune sessions", "err", err)
	} else if n > 0 {
		logger.Info("store: pruned sessions beyond [history] limits", "deleted", n, "max_sessions", h.MaxSessions, "max_age_days", h.MaxAgeDays)
	}
}

// DatabaseStatus is daemon.status's database object; nil (logged) when
// the database cannot be read.
func DatabaseStatus(ctx context.Context, st *store.Store, logger *slog.Logger) *proto.Database {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := st.Stats(ctx)
	if err != nil {
		logger.Warn("store: stats", "err", err)
		return nil
	}
	return &proto.Database{Path: s.Path, FileBytes: s.FileBytes, FreeBytes: s.FreeBytes, Sessions: s.Sessions, Turns: s.Turns}
}

// BridgeFingerprint is the identity the account's clawbot delivery state
// is bound to ("" when none).
func BridgeFingerprint(ctx context.Context, layout paths.Layout, account string) (string, error) {
	st, err := store.Open(ctx, store.Options{Path: layout.Database()})
	if err != nil {
		return "", err
	}
	defer st.Close()
	s, err := st.BridgeState(ctx, account)
	return s.Fingerprint, err
}

// NewServer wraps the app in a protocol server, with the frame limits of
// the user's configuration, persisting to st; name says what the server is
// in the messages that tell where a session is open.
func (a *App) NewServer(cfg *config.Config, st *store.Store, name string, status func() proto.DaemonStatus, shutdown func()) *server.Server {
	return server.New(a.serverOptions(cfg, st, name, status, shutdown))
}

func (a *App) serverOptions(cfg *config.Config, st *store.Store, name string, status func() proto.DaemonStatus, shutdown func()) server.Options {
	return server.Options{
		Factory: a, Logger: a.opts.Logger, Version: version.Version,
		MaxClientFrame: cfg.Protocol.MaxClientFrameBytes, MaxServerFrame: cfg.Protocol.MaxServerFrameBytes,
		MaxSessionsPerConn: cfg.Protocol.MaxSessionsPerConnection, MaxSessions: cfg.Protocol.MaxSessions,
		Status: status, Shutdown: shutdown, Store: st, Name: name,
	}
}
