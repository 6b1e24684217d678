package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// ErrLocked means another process kept the database locked for longer than
// Options.BusyTimeout. It is the only way contention reaches a caller.
var ErrLocked = errors.New("the database stayed locked by another scv process; retry, or find the process holding it")

// permanent marks an error that must not be retried even if it looks busy.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// retry runs fn until it succeeds, fails with anything but a lock conflict,
// or BusyTimeout has passed. SQLite's busy handler already waits inside each
// statement; this loop covers the conflicts it returns at once (a read
// snapshot that cannot become a write, WAL recovery by another process).
func (s *Store) retry(ctx context.Context, op string, fn func() error) error {
	if err := s.await(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	deadline := time.Now().Add(s.opts.BusyTimeout)
	wait := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn()
		var p permanent
		switch {
		case err == nil:
			return nil
		case errors.As(err, &p):
			return fmt.Errorf("%s: %w", op, p.err)
		case !busy(err):
			return fmt.Errorf("%s: %w", op, describe(err, s.path))
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case time.Now().After(deadline):
			return fmt.Errorf("%s: %w (%v)", op, ErrLocked, err)
		}
		if attempt == 10 {
			s.log.Warn("store write waiting for a lock", "op", op, "path", s.path)
		}
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// write runs fn in one BEGIN IMMEDIATE transaction, retried as a whole on
// lock conflicts, so fn must have no effect outside tx. durable makes the
// commit wait for the disk (synchronous=FULL: the WAL is fsynced), so the
// transaction survives a power loss, not only a crash of the process.
func (s *Store) write(ctx context.Context, op string, durable bool, fn func(tx *sql.Tx) error) error {
	return s.retry(ctx, op, func() error {
		if err := s.checkFile(); err != nil {
			return err
		}
		conn, err := s.w.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if durable && !s.bulk {
			if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = FULL"); err != nil {
				return err
			}
			defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous = NORMAL")
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		if s.opts.Fault != nil {
			if err := s.opts.Fault(op); err != nil {
				tx.Rollback()
				return permanent{err}
			}
		}
		if err := tx.Commit(); err != nil {
			tx.Rollback()
			return err
		}
		s.committed()
		return nil
	})
}

// The statements every turn runs, prepared once on the write connection:
// parsing SQL is a noticeable part of a small write in the pure-Go SQLite.
const (
	qSessionForTurn = `SELECT sid, hist_lo, hist_hi, turns, renamed, title, last_seq, lease_instance, lease_pid, lease_start, lease_name, lease_ns FROM sessions WHERE id = ?`
	qRunningTurn    = `SELECT turn_id FROM turns WHERE sid = ? AND state = 'running'`
	qInsertTurn     = `INSERT INTO turns (sid, turn_id, n, prompt, state, started_ns, hist_lo, hist_hi) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)`
	qSessionBegun   = `UPDATE sessions SET turns = turns + 1, title = ?, state = 'open', updated_ns = ?, bytes = bytes + ? WHERE sid = ?`
	qTurnState      = `SELECT state FROM turns WHERE id = ?`
	qSessionEvents  = `UPDATE sessions SET last_seq = max(last_seq, ?), bytes = bytes + ?, updated_ns = ? WHERE sid = ?`
	qHistory        = `SELECT sid, hist_lo, hist_hi FROM sessions WHERE id = ?`
	qSessionHistory = `UPDATE sessions SET hist_lo = ?, hist_hi = ?, bytes = bytes + ?, updated_ns = ? WHERE sid = ?`
	qEndTurn        = `UPDATE turns SET state = ?, error_code = ?, error_msg = ?, answer = ?, input_tokens = ?, output_tokens = ?, total_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?, ended_ns = ? WHERE id = ?`
	qSessionBytes   = `UPDATE sessions SET bytes = bytes + ? WHERE sid = ?`
)

// A turn's events and history messages are inserted several rows per
// statement: one multi-row INSERT of up to insertRows[0] rows, then smaller
// ones for the rest, so 47 events take 5 statements instead of 47 (each
// statement costs a trip through database/sql and the driver).
// insertRows are the row counts of those statements, largest first.
var insertRows = [...]int{16, 4, 1}

// queryTable holds the multi-row INSERTs, by row count, and the
// statements kept prepared; built on first use, not at start-up (every
// command links this package).
type queryTable struct {
	once                        sync.Once
	insertEvents, insertMessage map[int]string
	hot                         []string
}

var queries queryTable

func builtQueries() *queryTable {
	queries.once.Do(func() {
		queries.insertEvents = multiRow(`INSERT INTO events (turn, seq, data) VALUES `, `(?, ?, ?)`)
		queries.insertMessage = multiRow(`INSERT INTO messages (sid, pos, data) VALUES `, `(?, ?, ?)`)
		queries.hot = append([]string{qSessionForTurn, qRunningTurn, qInsertTurn, qSessionBegun, qTurnState,
			qSessionEvents, qHistory, qSessionHistory, qEndTurn, qSessionBytes},
			append(values(queries.insertEvents), values(queries.insertMessage)...)...)
	})
	return &queries
}

// multiRow is the INSERT of n rows for each n of insertRows, by n.
func multiRow(head, row string) map[int]string {
	m := map[int]string{}
	for _, n := range insertRows {
		m[n] = head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	return m
}

// rowsFor is how many of n remaining rows the next INSERT takes.
func rowsFor(n int) int {
	for _, k := range insertRows {
		if n >= k {
			return k
		}
	}
	return n
}

func values(m map[int]string) []string {
	var l []string
	for _, n := range insertRows {
		l = append(l, m[n])
	}
	return l
}

// inTx is the context for the statements inside a write transaction. The
// transaction holds the write lock from BEGIN IMMEDIATE on, so they never
// wait for another process and need no cancellation; a context without
// Done spares the driver a goroutine and two progress-handler calls per
// statement. The lock wait (BEGIN) and the commit keep the caller's
// context.
func inTx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// prepareHot prepares the turn statements; it must run outside a write
// transaction (the write pool has one connection).
func (s *Store) prepareHot(ctx context.Context) error {
	s.hotMu.Lock()
	defer s.hotMu.Unlock()
	if s.hot != nil {
		return nil
	}
	hot := map[string]*sql.Stmt{}
	err := s.retry(ctx, "prepare statements", func() error {
		for _, q := range builtQueries().hot {
			if hot[q] != nil {
				continue
			}
			st, err := s.w.PrepareContext(ctx, q)
			if err != nil {
				return err
			}
			hot[q] = st
		}
		return nil
	})
	if err != nil {
		for _, st := range hot {
			st.Close()
		}
		return err
	}
	s.hot = hot
	return nil
}

// stmt is hot statement q inside tx (prepareHot ran before the
// transaction began).
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	s.hotMu.Lock()
	st := s.hot[q]
	s.hotMu.Unlock()
	return tx.StmtContext(ctx, st)
}

// read runs fn in one read transaction: a consistent snapshot that never
// blocks a writer.
func (s *Store) read(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	return s.readOn(ctx, false, op, fn)
}

// readOn is read on the read pool, or on the write connection when writer
// is set (where the read pool would have to open a connection only for
// it). The pool is picked once the store is open (OpenAsync).
func (s *Store) readOn(ctx context.Context, writer bool, op string, fn func(tx *sql.Tx) error) error {
	return s.retry(ctx, op, func() error {
		db := s.r
		if writer {
			db = s.w
		}
		// Read-only: a plain BEGIN, never the write pool's BEGIN
		// IMMEDIATE, which would take the write lock to read.
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return fn(tx)
	})
}

// queryAll runs q in tx and returns every row as scan reads it, in order;
// the rows are closed when it returns, so tx can run the next query.
func queryAll[T any](ctx context.Context, tx *sql.Tx, scan func(*sql.Rows) (T, error), q string, args ...any) ([]T, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanOne reads a row of one column.
func scanOne[T any](rows *sql.Rows) (T, error) {
	var v T
	err := rows.Scan(&v)
	return v, err
}
