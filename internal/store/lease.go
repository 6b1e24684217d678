package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A session is live in at most one process at a time: the holder of its
// lease, stored in the session's row. Acquire takes the lease (or takes it
// over from a holder that Options.Alive says is dead), Release gives it
// back. The lease is what tells a turn left running by a dead process
// (interrupted) from one running elsewhere right now.

var errLeaseChanged = errors.New("lease changed meanwhile")

// clearLease empties a session's lease; callers add the WHERE clause.
const clearLease = `UPDATE sessions SET lease_instance = '', lease_pid = 0, lease_start = 0, lease_name = '', lease_ns = 0 `

func leaseOf(ctx context.Context, q querier, id string) (*Holder, error) {
	var h Holder
	err := q.QueryRowContext(ctx, `SELECT lease_instance, lease_pid, lease_start, lease_name FROM sessions WHERE id = ?`, id).
		Scan(&h.Instance, &h.PID, &h.Start, &h.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, permanent{fmt.Errorf("session %s: %w", id, ErrNotFound)}
	} else if err != nil {
		return nil, err
	}
	if h.zero() {
		return nil, nil
	}
	return &h, nil
}

func sameLease(a, b *Holder) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.same(*b)
}

// Acquire makes this process (Options.Holder) the holder of session id's
// lease and returns the session. When another live process holds it, it
// fails with a *BusyError naming that process. When the holder is dead, the
// lease is taken over and that holder's running turns are marked
// interrupted in the same transaction. Acquiring a lease this process
// already holds succeeds; telling apart two users of one session inside a
// process is the caller's business.
func (s *Store) Acquire(ctx context.Context, id string) (Session, error) {
	self := s.opts.Holder
	if self.zero() {
		return Session{}, fmt.Errorf("acquire session %s: the store was opened without a holder identity", id)
	}
	for range 5 {
		x, err := s.Session(ctx, id)
		if err != nil {
			return Session{}, fmt.Errorf("acquire session: %w", err)
		}
		if err := s.checkLease(x); err != nil {
			return Session{}, err
		}
		var interrupted int64
		err = s.write(ctx, "acquire session", false, func(tx *sql.Tx) error {
			cur, err := leaseOf(ctx, tx, id)
			if err != nil {
				return err
			}
			if !sameLease(cur, x.Lease) {
				return permanent{errLeaseChanged}
			}
			interrupted = 0
			if cur != nil && !cur.same(self) {
				if interrupted, err = markInterrupted(ctx, tx, id, s.now()); err != nil {
					return err
				}
			}
			_, err = tx.ExecContext(ctx, `UPDATE sessions SET lease_instance = ?, lease_pid = ?, lease_start = ?, lease_name = ?, lease_ns = ?
				WHERE id = ?`, self.Instance, self.PID, self.Start, self.Name, s.now(), id)
			return err
		})
		if errors.Is(err, errLeaseChanged) {
			continue
		}
		if err != nil {
			return Session{}, err
		}
		if x.Lease != nil && !x.Lease.same(self) {
			s.log.Warn("took over the session of a process that is gone", "session", id, "holder", x.Lease.String(), "interrupted_turns", interrupted)
		}
		return s.Session(ctx, id)
	}
	return Session{}, fmt.Errorf("acquire session %s: its lease kept changing; retry", id)
}

// Release gives up this process's lease on session id; a lease held by
// another process is left alone.
func (s *Store) Release(ctx context.Context, id string) error {
	h := s.opts.Holder
	return s.write(ctx, "release session", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, clearLease+`WHERE id = ? AND lease_instance = ? AND lease_pid = ? AND lease_start = ?`, id, h.Instance, h.PID, h.Start)
		return err
	})
}

// ReleaseAll gives up every lease this process holds (at shutdown).
func (s *Store) ReleaseAll(ctx context.Context) error {
	h := s.opts.Holder
	return s.write(ctx, "release sessions", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, clearLease+`WHERE lease_instance = ? AND lease_pid = ? AND lease_start = ?`, h.Instance, h.PID, h.Start)
		return err
	})
}

// Recovery counts what Recover repaired.
type Recovery struct {
	// Turns is the number of running turns marked interrupted.
	Turns int
	// Leases is the number of leases of dead processes cleared.
	Leases int
}

// Recover marks interrupted every running turn whose session has no live
// lease holder, and clears the leases of dead holders. A server calls it at
// start: a turn still running in the file then belongs to a process that
// died, unless that process is alive and holds the session. The turn's
// events are kept and its history was never applied.
func (s *Store) Recover(ctx context.Context) (Recovery, error) {
	type cand struct {
		id    string
		lease *Holder
	}
	var cands []cand
	// On the write connection, open already (a read-only transaction:
	// no write lock): Recover runs at every server's start, and the
	// read pool's first connection would cost as much as the query.
	err := s.readOn(ctx, true, "recover", func(tx *sql.Tx) error {
		var err error
		cands, err = queryAll(ctx, tx, func(rows *sql.Rows) (cand, error) {
			var c cand
			var h Holder
			err := rows.Scan(&c.id, &h.Instance, &h.PID, &h.Start, &h.Name)
			if !h.zero() {
				c.lease = &h
			}
			return c, err
		}, `SELECT id, lease_instance, lease_pid, lease_start, lease_name FROM sessions
			WHERE lease_pid != 0 OR lease_instance != ''
			   OR sid IN (SELECT sid FROM turns WHERE state = 'running')`)
		return err
	})
	if err != nil {
		return Recovery{}, err
	}
	var r Recovery
	for _, c := range cands {
		if c.lease != nil && (c.lease.same(s.opts.Holder) || s.opts.Alive(*c.lease)) {
			continue
		}
		var n int64
		err := s.write(ctx, "recover session", true, func(tx *sql.Tx) error {
			cur, err := leaseOf(ctx, tx, c.id)
			if errors.Is(err, ErrNotFound) {
				return nil // deleted meanwhile
			} else if err != nil {
				return err
			}
			if !sameLease(cur, c.lease) {
				return nil // acquired meanwhile: its new holder decides
			}
			if n, err = markInterrupted(ctx, tx, c.id, s.now()); err != nil {
				return err
			}
			if cur != nil {
				_, err = tx.ExecContext(ctx, clearLease+`WHERE id = ?`, c.id)
			}
			return err
		})
		if err != nil {
			return r, err
		}
		r.Turns += int(n)
		if c.lease != nil {
			r.Leases++
		}
	}
	if r.Turns > 0 || r.Leases > 0 {
		s.log.Info("store recovered sessions of stopped processes", "interrupted_turns", r.Turns, "leases", r.Leases)
	}
	return r, nil
}

// InterruptedCode and InterruptedMessage are the error stored on a turn
// marked interrupted.
const (
	InterruptedCode    = "interrupted"
	InterruptedMessage = "the process running this turn stopped before the turn ended"
)

func markInterrupted(ctx context.Context, tx *sql.Tx, id string, now int64) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE turns SET state = 'interrupted', error_code = ?, error_msg = ?, ended_ns = ?
		WHERE state = 'running' AND sid = (SELECT sid FROM sessions WHERE id = ?)`, InterruptedCode, InterruptedMessage, now, id)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// LiveHolder returns the process session x is live in: false when it has
// no lease or the holder is gone (Options.Alive).
func (s *Store) LiveHolder(x Session) (Holder, bool) {
	if x.Lease == nil {
		return Holder{}, false
	}
	if x.Lease.same(s.opts.Holder) || s.opts.Alive(*x.Lease) {
		return *x.Lease, true
	}
	return Holder{}, false
}
