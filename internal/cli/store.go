package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// openStore opens the instance's session database ($SCV_HOME/state/scv.db,
// docs/store.md). A process that serves sessions names itself (name:
// "daemon", "scv exec", ...): it holds the leases of the sessions it has
// open, and Recover marks the turns of dead processes interrupted. A
// process that only reads or deletes (scv sessions) passes "" and holds
// nothing.
func openStore(ctx context.Context, layout paths.Layout, name string, logger *slog.Logger) (*store.Store, error) {
	var me store.Holder
	if name != "" {
		pid := os.Getpid()
		start, err := proc.StartTime(pid)
		if err != nil {
			logger.Warn("cannot read this process's start time; leases name the pid alone", "err", err)
		}
		me = store.Holder{Instance: layout.Home, PID: pid, Start: int64(start), Name: name}
	}
	st, err := store.Open(ctx, store.Options{
		Path: layout.Database(), Holder: me, Logger: logger,
		Alive: func(h store.Holder) bool {
			if h.Instance != layout.Home {
				return false // not a process of this home: nothing can hold its sessions
			}
			return proc.Alive(h.PID, uint64(h.Start))
		},
	})
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

// closeStore gives back this process's leases and closes the database.
func closeStore(st *store.Store, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.ReleaseAll(ctx); err != nil {
		logger.Warn("store: release sessions", "err", err)
	}
	if err := st.Close(); err != nil {
		logger.Warn("store: close", "err", err)
	}
}

// retention is the [history] configuration as prune options.
func retention(h config.History) store.PruneOptions {
	return store.PruneOptions{MaxSessions: h.MaxSessions, MaxAge: time.Duration(h.MaxAgeDays) * 24 * time.Hour}
}

// databaseExists says the session database file is there (status reads it
// only then, rather than creating an empty one).
func databaseExists(layout paths.Layout) bool {
	_, err := os.Stat(layout.Database())
	return !errors.Is(err, fs.ErrNotExist)
}

// prune applies the [history] limits at daemon start (docs/store.md).
func prune(ctx context.Context, st *store.Store, h config.History, logger *slog.Logger) {
	n, err := st.Prune(ctx, retention(h))
	if err != nil {
		logger.Warn("store: prune sessions", "err", err)
	} else if n > 0 {
		logger.Info("store: pruned sessions beyond [history] limits", "deleted", n, "max_sessions", h.MaxSessions, "max_age_days", h.MaxAgeDays)
	}
}

// databaseStatus is daemon.status's database object; nil (logged) when
// the database cannot be read.
func databaseStatus(ctx context.Context, st *store.Store, logger *slog.Logger) *proto.Database {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := st.Stats(ctx)
	if err != nil {
		logger.Warn("store: stats", "err", err)
		return nil
	}
	return &proto.Database{Path: s.Path, FileBytes: s.FileBytes, FreeBytes: s.FreeBytes, Sessions: s.Sessions, Turns: s.Turns}
}

// offlineDatabase reads the database's state while no daemon runs; nil
// when there is no database yet or it cannot be read.
func (g *globals) offlineDatabase(layout paths.Layout) *proto.Database {
	if !databaseExists(layout) {
		return nil
	}
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(g.ctx, layout, "", logger)
	if err != nil {
		return nil
	}
	defer st.Close()
	return databaseStatus(g.ctx, st, logger)
}

// describeDatabase is the status line of the database.
func describeDatabase(d *proto.Database) string {
	return fmt.Sprintf("%s (%s, %s, %s)", d.Path, byteSize(d.FileBytes), count(d.Sessions, "session"), count(d.Turns, "turn"))
}

// count is "1 turn", "2 turns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byteSize formats a size in B, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
