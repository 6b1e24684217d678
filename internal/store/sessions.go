package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/textcut"
)

// NewSession describes a session to create.
type NewSession struct {
	// ID is the session id the server assigned (a UUID).
	ID              string
	Workspace       string
	Provider, Model string
	// WireAPI and BaseURL are the endpoint the session runs with (see
	// Session.WireAPI).
	WireAPI, BaseURL string
	Origin           Origin
	DelegationDepth  int
	// Mode is the mode it starts in (ModeDefault or ModePlan; "" is
	// ModeDefault).
	Mode string
}

// check says what is wrong with n, naming it.
func (n NewSession) check() error {
	if err := checkID("session", n.ID); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if n.Workspace == "" {
		return fmt.Errorf("create session %s: empty workspace", n.ID)
	}
	if !n.Origin.valid() {
		return fmt.Errorf("create session %s: unknown origin %q (want tui, exec, stdio, clawbot or acp)", n.ID, n.Origin)
	}
	if n.Mode != "" && n.Mode != ModeDefault && n.Mode != ModePlan {
		return fmt.Errorf("create session %s: mode %q is not %s or %s", n.ID, n.Mode, ModeDefault, ModePlan)
	}
	return nil
}

// CreateSession stores a new, empty, open session, live in this process:
// when the store has a holder identity, the creator holds the session's
// lease (see Acquire). Its title comes from its first prompt (see
// BeginTurn) unless Rename sets one. The server stores a new session with
// its first turn instead (BeginFirstTurn); this stays for a session set up
// without a turn, which is what the tests of every package reading stored
// sessions do.
func (s *Store) CreateSession(ctx context.Context, n NewSession) (Session, error) {
	if err := n.check(); err != nil {
		return Session{}, err
	}
	now := s.now()
	var x Session
	err := s.write(ctx, "create session", false, func(tx *sql.Tx) error {
		if err := s.insertSession(ctx, tx, n, now); err != nil {
			return err
		}
		// Read back in the same transaction: the read pool may not
		// have a connection open yet, and this is before a first turn.
		var err error
		x, _, err = getSession(ctx, tx, n.ID)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return x, nil
}

// insertSession adds n's row in tx, leased to this process.
func (s *Store) insertSession(ctx context.Context, tx *sql.Tx, n NewSession, now int64) error {
	h, leased := s.opts.Holder, int64(0)
	if !h.zero() {
		leased = now
	}
	mode := n.Mode
	if mode == "" {
		mode = ModeDefault
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, workspace, provider, model, wire_api, base_url, origin, state, depth, created_ns, updated_ns,
			lease_instance, lease_pid, lease_start, lease_name, lease_ns, mode)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, n.ID, n.Workspace, n.Provider, n.Model, n.WireAPI, n.BaseURL, string(n.Origin), string(SessionOpen), n.DelegationDepth, now, now,
		h.Instance, h.PID, h.Start, h.Name, leased, mode)
	if constraint(err) {
		return permanent{fmt.Errorf("session %s already exists", n.ID)}
	}
	return err
}

const sessionCols = `sid, id, workspace, title, provider, model, wire_api, base_url, origin, state, depth, parent_id, parent_turn,
	created_ns, updated_ns, turns, bytes, last_seq, lease_instance, lease_pid, lease_start, lease_name, lease_ns, mode`

type rowScanner interface{ Scan(dest ...any) error }

func scanSession(r rowScanner) (Session, int64, error) {
	var (
		x                     Session
		sid, created, updated int64
		origin, state         string
		lInst, lName          string
		lPID                  int
		lStart, lNS           int64
	)
	err := r.Scan(&sid, &x.ID, &x.Workspace, &x.Title, &x.Provider, &x.Model, &x.WireAPI, &x.BaseURL, &origin, &state, &x.DelegationDepth,
		&x.ForkedFrom, &x.ForkedAt, &created, &updated, &x.Turns, &x.Bytes, &x.LastSeq, &lInst, &lPID, &lStart, &lName, &lNS, &x.Mode)
	if err != nil {
		return Session{}, 0, err
	}
	x.Origin, x.State = Origin(origin), SessionState(state)
	x.Created, x.Updated = ns(created), ns(updated)
	if lPID != 0 || lInst != "" {
		x.Lease = &Holder{Instance: lInst, PID: lPID, Start: lStart, Name: lName}
		x.LeasedAt = ns(lNS)
	}
	return x, sid, nil
}

// Session returns one session's summary.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var x Session
	err := s.read(ctx, "read session", func(tx *sql.Tx) error {
		var err error
		x, _, err = getSession(ctx, tx, id)
		return err
	})
	return x, err
}

func getSession(ctx context.Context, q querier, id string) (Session, int64, error) {
	x, sid, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, 0, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return x, sid, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ListOptions select sessions, most recently updated first.
type ListOptions struct {
	// Workspace, when set, keeps the sessions of that directory only.
	Workspace string
	// Limit bounds the page; 0 is 50.
	Limit int
	// Before is the Next cursor of a previous page.
	Before string
	// HideUnanswered leaves out the sessions that failed before any
	// answer: turns, none with an answer, the latest failed (a wrong key
	// or endpoint, most often).
	HideUnanswered bool
}

// unanswered is the SQL condition of a session that failed before any
// answer (ListOptions.HideUnanswered).
const unanswered = `(turns > 0 AND NOT EXISTS (SELECT 1 FROM turns a WHERE a.sid = sessions.sid AND a.answer != '')
	AND (SELECT l.state FROM turns l WHERE l.sid = sessions.sid ORDER BY l.n DESC LIMIT 1) = 'failed')`

// extraScan scans a row with columns after those of its scanner.
type extraScan struct {
	r     rowScanner
	extra []any
}

func (e extraScan) Scan(dest ...any) error { return e.r.Scan(append(dest, e.extra...)...) }

// Page is one page of sessions. Next, when not empty, is the Before of the
// following page.
type Page struct {
	Sessions []Session `json:"sessions"`
	Next     string    `json:"next,omitempty"`
}

// ListSessions pages through sessions, newest update first.
func (s *Store) ListSessions(ctx context.Context, o ListOptions) (Page, error) {
	if o.Limit <= 0 {
		o.Limit = 50
	}
	var (
		where []string
		args  []any
	)
	if o.Workspace != "" {
		where = append(where, "workspace = ?")
		args = append(args, o.Workspace)
	}
	if o.Before != "" {
		upd, sid, err := parseCursor(o.Before)
		if err != nil {
			return Page{}, fmt.Errorf("list sessions: %w", err)
		}
		where = append(where, "(updated_ns < ? OR (updated_ns = ? AND sid < ?))")
		args = append(args, upd, upd, sid)
	}
	if o.HideUnanswered {
		where = append(where, "NOT "+unanswered)
	}
	q := `SELECT ` + sessionCols + `, coalesce((SELECT l.state FROM turns l WHERE l.sid = sessions.sid ORDER BY l.n DESC LIMIT 1), ''),
		coalesce((SELECT substr(f.prompt, 1, 200) FROM turns f WHERE f.sid = sessions.sid ORDER BY f.n LIMIT 1), '') FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_ns DESC, sid DESC LIMIT ?"
	args = append(args, o.Limit+1)
	var p Page
	err := s.read(ctx, "list sessions", func(tx *sql.Tx) error {
		p = Page{}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var lastSID int64
		for rows.Next() {
			var last, first string
			x, sid, err := scanSession(extraScan{rows, []any{&last, &first}})
			if err != nil {
				return err
			}
			x.LastTurn, x.FirstPrompt = TurnState(last), strings.ToValidUTF8(first, "")
			if len(p.Sessions) == o.Limit {
				last := p.Sessions[len(p.Sessions)-1]
				p.Next = itoa(last.Updated.UnixNano()) + "." + itoa(lastSID)
				break
			}
			p.Sessions = append(p.Sessions, x)
			lastSID = sid
		}
		return rows.Err()
	})
	return p, err
}

func parseCursor(c string) (int64, int64, error) {
	a, b, ok := strings.Cut(c, ".")
	var upd, sid int64
	if ok {
		_, err1 := fmt.Sscan(a, &upd)
		_, err2 := fmt.Sscan(b, &sid)
		ok = err1 == nil && err2 == nil
	}
	if !ok {
		return 0, 0, fmt.Errorf("invalid cursor %q (pass the next value of a previous page)", c)
	}
	return upd, sid, nil
}

// Rename sets a session's title. An empty title is refused; the title is
// one line of at most 200 bytes.
func (s *Store) Rename(ctx context.Context, id, title string) error {
	t := titleLine(title)
	if t == "" {
		return fmt.Errorf("rename session %s: empty title", id)
	}
	return s.write(ctx, "rename session", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET title = ?, renamed = 1, updated_ns = ? WHERE id = ?`, t, s.now(), id))(id)
	})
}

// SetState records that a session was closed or reopened.
func (s *Store) SetState(ctx context.Context, id string, st SessionState) error {
	if st != SessionOpen && st != SessionClosed {
		return fmt.Errorf("set state of session %s: unknown state %q", id, st)
	}
	return s.write(ctx, "set session state", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET state = ?, updated_ns = ? WHERE id = ?`, string(st), s.now(), id))(id)
	})
}

// mustAffect turns an update that matched no session into ErrNotFound.
func mustAffect(r sql.Result, err error) func(id string) error {
	return func(id string) error {
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return permanent{fmt.Errorf("session %s: %w", id, ErrNotFound)}
		}
		return nil
	}
}

// maxTitleBytes bounds a title.
const maxTitleBytes = 200

// titleLine is the first non-blank line of text, trimmed and cut to
// maxTitleBytes on a rune boundary.
func titleLine(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return textcut.Prefix(line, maxTitleBytes)
	}
	return ""
}

// Delete removes a session with its turns, events and history. A session
// live in another running process is refused with a *BusyError. The freed
// pages are zeroed (secure_delete) and, when no other process is reading,
// checkpointed into the main file and the WAL truncated, so the deleted text
// does not remain in the files.
func (s *Store) Delete(ctx context.Context, id string) error {
	x, err := s.Session(ctx, id)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if err := s.checkLease(x); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	err = s.write(ctx, "delete session", true, func(tx *sql.Tx) error {
		cur, err := leaseOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if !sameLease(cur, x.Lease) {
			return permanent{fmt.Errorf("session %s was taken by another process meanwhile; retry", id)}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return err
	}
	s.compact(ctx)
	return nil
}

// checkLease refuses a session whose lease belongs to another live process.
func (s *Store) checkLease(x Session) error {
	if x.Lease == nil || x.Lease.same(s.opts.Holder) || !s.opts.Alive(*x.Lease) {
		return nil
	}
	return &BusyError{SessionID: x.ID, Holder: *x.Lease, Since: x.LeasedAt}
}

// compact returns free pages to the file system and folds the WAL into the
// main file. Both are best effort, bounded to a few seconds: a process
// reading keeps the WAL until the next checkpoint.
func (s *Store) compact(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.await(ctx) != nil {
		return
	}
	if _, err := s.w.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		s.log.Warn("store incremental vacuum failed", "err", err)
	}
	s.Checkpoint(ctx)
}

// Checkpoint copies the WAL into the main database file and truncates the
// WAL, waiting (within ctx) for writers of other processes to finish. It
// reports whether the WAL was fully checkpointed; it is not when another
// connection still reads an older snapshot.
func (s *Store) Checkpoint(ctx context.Context) bool {
	if s.await(ctx) != nil {
		return false
	}
	var busyFlag, logPages, done int
	err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busyFlag, &logPages, &done)
	if err != nil {
		s.log.Warn("store checkpoint failed", "err", err)
		return false
	}
	return busyFlag == 0
}

// Fork creates session newID whose history is the history session id had
// just before turn turnID began, and which holds copies of the turns before
// it (with their events), so the fork reads like the original up to that
// point. It is "rewind and edit": the caller then sends the edited prompt
// as the fork's next turn. The fork keeps the original's title, unless it
// is forked at the first turn and was not renamed: its own first prompt
// then names it.
func (s *Store) Fork(ctx context.Context, id, turnID, newID string, origin Origin) (Session, error) {
	if err := checkID("session", newID); err != nil {
		return Session{}, fmt.Errorf("fork session: %w", err)
	}
	if !origin.valid() {
		return Session{}, fmt.Errorf("fork session: unknown origin %q", origin)
	}
	now := s.now()
	err := s.write(ctx, "fork session", false, func(tx *sql.Tx) error {
		return forkTx(ctx, tx, id, turnID, newID, origin, now)
	})
	if err != nil {
		return Session{}, err
	}
	return s.Session(ctx, newID)
}

func forkTx(ctx context.Context, tx *sql.Tx, id, turnID, newID string, origin Origin, now int64) error {
	_, sid, err := getSession(ctx, tx, id)
	if err != nil {
		return permanent{err}
	}
	var n int
	var lo, hi int64
	err = tx.QueryRowContext(ctx, `SELECT n, hist_lo, hist_hi FROM turns WHERE sid = ? AND turn_id = ?`, sid, turnID).Scan(&n, &lo, &hi)
	if errors.Is(err, sql.ErrNoRows) {
		return permanent{fmt.Errorf("turn %s of session %s: %w", turnID, id, ErrNotFound)}
	} else if err != nil {
		return err
	}
	// The copied turns' own history windows may start before lo (history
	// trimmed later); copy from the earliest, renumbered from 0.
	var base int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(min(hist_lo), ?) FROM turns WHERE sid = ? AND n <= ?`, lo, sid, n).Scan(&base); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, workspace, title, renamed, provider, model, wire_api, base_url, origin, state, depth,
			parent_id, parent_turn, created_ns, updated_ns, hist_lo, hist_hi)
		SELECT ?, workspace, CASE WHEN renamed = 1 OR ? > 1 THEN title ELSE '' END, renamed, provider, model, wire_api, base_url, ?, ?, depth, id, ?, ?, ?, ?, ? FROM sessions WHERE sid = ?`,
		newID, n, string(origin), string(SessionOpen), turnID, now, now, lo-base, hi-base, sid)
	if constraint(err) {
		return permanent{fmt.Errorf("session %s already exists", newID)}
	} else if err != nil {
		return err
	}
	nsid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (sid, pos, data)
		SELECT ?, pos - ?, data FROM messages WHERE sid = ? AND pos >= ? AND pos < ?`, nsid, base, sid, base, hi); err != nil {
		return err
	}
	if err := copyTurns(ctx, tx, sid, nsid, n, base); err != nil {
		return err
	}
	// Counters of the copy.
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET
			turns = (SELECT count(*) FROM turns WHERE sid = ?1),
			last_seq = coalesce((SELECT max(e.seq) FROM events e JOIN turns t ON e.turn = t.id WHERE t.sid = ?1), 0),
			bytes = coalesce((SELECT sum(length(e.data)) FROM events e JOIN turns t ON e.turn = t.id WHERE t.sid = ?1), 0)
				+ coalesce((SELECT sum(length(data)) FROM messages WHERE sid = ?1), 0)
		WHERE sid = ?1`, nsid)
	return err
}

// copyTurns copies the turns of session sid before turn number n into
// session nsid, with their events and images, their history windows
// shifted down by base; a turn that was running is copied interrupted.
func copyTurns(ctx context.Context, tx *sql.Tx, sid, nsid int64, n int, base int64) error {
	old, err := queryAll(ctx, tx, scanOne[int64], `SELECT id FROM turns WHERE sid = ? AND n < ? ORDER BY n`, sid, n)
	if err != nil {
		return err
	}
	for _, t := range old {
		if err := copyTurn(ctx, tx, t, nsid, base); err != nil {
			return err
		}
	}
	return nil
}

// copyTurn copies the turn in row t, its events and its images into
// session nsid (see copyTurns).
func copyTurn(ctx context.Context, tx *sql.Tx, t, nsid, base int64) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO turns (sid, turn_id, n, prompt, answer, state, error_code, error_msg,
			input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, cost_usd, started_ns, ended_ns, hist_lo, hist_hi)
		SELECT ?, turn_id, n, prompt, answer, CASE state WHEN 'running' THEN 'interrupted' ELSE state END, error_code, error_msg, input_tokens, output_tokens, total_tokens,
			cache_read_tokens, cache_write_tokens, cost_usd, started_ns, ended_ns, hist_lo - ?, hist_hi - ? FROM turns WHERE id = ?`, nsid, base, base, t)
	if err != nil {
		return err
	}
	nt, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (turn, seq, data) SELECT ?, seq, data FROM events WHERE turn = ?`, nt, t); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO turn_images (turn, n, path, media_type, size, sha256) SELECT ?, n, path, media_type, size, sha256 FROM turn_images WHERE turn = ?`, nt, t)
	return err
}
