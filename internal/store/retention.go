package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// PruneOptions say which sessions to keep. Zero values keep everything.
type PruneOptions struct {
	// MaxSessions keeps the most recently updated sessions only.
	MaxSessions int
	// MaxAge removes sessions not updated for longer.
	MaxAge time.Duration
	// Workspace, when set, applies both limits to that directory's
	// sessions only (a project's own, lower limits).
	Workspace string
}

// Prune deletes the sessions beyond MaxSessions or older than MaxAge,
// except those live in a running process, then compacts the file. It
// returns how many it deleted.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (int, error) {
	if o.MaxSessions < 0 || o.MaxAge < 0 {
		return 0, fmt.Errorf("prune sessions: negative limit (max sessions %d, max age %v)", o.MaxSessions, o.MaxAge)
	}
	if o.MaxSessions == 0 && o.MaxAge == 0 {
		return 0, nil
	}
	var victims []Session
	err := s.read(ctx, "prune sessions", func(tx *sql.Tx) error {
		victims = victims[:0]
		q := `SELECT ` + sessionCols + ` FROM sessions`
		var args []any
		if o.Workspace != "" {
			q += ` WHERE workspace = ?`
			args = append(args, o.Workspace)
		}
		q += ` ORDER BY updated_ns DESC, sid DESC`
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cutoff := int64(0)
		if o.MaxAge > 0 {
			cutoff = s.opts.Now().Add(-o.MaxAge).UnixNano()
		}
		for i := 0; rows.Next(); i++ {
			x, _, err := scanSession(rows)
			if err != nil {
				return err
			}
			if (o.MaxSessions > 0 && i >= o.MaxSessions) || (cutoff != 0 && x.Updated.UnixNano() < cutoff) {
				victims = append(victims, x)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, x := range victims {
		if x.Lease != nil && (x.Lease.same(s.opts.Holder) || s.opts.Alive(*x.Lease)) {
			continue // live here or elsewhere
		}
		err := s.write(ctx, "prune session", false, func(tx *sql.Tx) error {
			cur, err := leaseOf(ctx, tx, x.ID)
			if errors.Is(err, ErrNotFound) {
				return nil
			} else if err != nil {
				return err
			}
			if !sameLease(cur, x.Lease) {
				return nil // acquired meanwhile: keep it
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ? AND updated_ns = ?`, x.ID, x.Updated.UnixNano())
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			n += int(k)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	if n > 0 {
		s.compact(ctx)
	}
	return n, nil
}

// Stats describe the database for `scv status`.
type Stats struct {
	Path string `json:"path"`
	// FileBytes is the size on disk of the database and its WAL.
	FileBytes int64 `json:"file_bytes"`
	// FreeBytes is the part of the file that is free pages, returned to
	// the file system by the next compaction.
	FreeBytes int64 `json:"free_bytes"`
	Sessions  int   `json:"sessions"`
	Turns     int   `json:"turns"`
	Schema    int   `json:"schema"`
}

// Stats returns the database's size and counts.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Path: s.path}
	err := s.read(ctx, "read stats", func(tx *sql.Tx) error {
		var pageSize, free int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(turns), 0) FROM sessions`).Scan(&st.Sessions, &st.Turns); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			return err
		}
		st.FreeBytes = pageSize * free
		return tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&st.Schema)
	})
	if err != nil {
		return Stats{}, err
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Stats{}, fmt.Errorf("read stats: %w", err)
		}
		if err == nil {
			st.FileBytes += fi.Size()
		}
	}
	return st, nil
}

// Compact returns free pages to the file system (incremental vacuum) and
// checkpoints the WAL. Delete and Prune do it on their own.
func (s *Store) Compact(ctx context.Context) { s.compact(ctx) }

// Check runs SQLite's integrity check and FTS5's check of the search
// index: that it matches the turns when none is running (a running turn is
// not indexed yet), its own consistency otherwise. Open a fresh Store for
// it: FTS5's check trusts index structures cached by a connection that
// read the index before another process changed it.
func (s *Store) Check(ctx context.Context) error {
	if err := s.await(ctx); err != nil {
		return err
	}
	var res string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("integrity check of %s: %w", s.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check of %s: %s", s.path, res)
	}
	var running int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM turns WHERE state = 'running'").Scan(&running); err != nil {
		return fmt.Errorf("integrity check of %s: %w", s.path, err)
	}
	against := 1 // compare the index with the turns
	if running > 0 {
		against = 0
	}
	if _, err := s.w.ExecContext(ctx, "INSERT INTO search(search, rank) VALUES ('integrity-check', ?)", against); err != nil {
		return fmt.Errorf("search index of %s is damaged or does not match the turns: %w", s.path, err)
	}
	return nil
}
