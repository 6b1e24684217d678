package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/filechange"
)

// Event buffering of a TurnLog: Append writes the buffer out once it holds
// this many events or bytes, or its oldest event is this old.
const (
	flushEvents = 256
	flushBytes  = 1 << 20
	flushAge    = 500 * time.Millisecond
)

// TurnLog records one running turn: its events as they are sent, then its
// end. Events are buffered and written in batches; Complete and End write
// what is left in the same transaction as the turn's outcome. Its methods
// are safe for concurrent use; after Complete or End succeeded, the log is
// done and every method fails.
type TurnLog struct {
	s         *Store
	sessionID string
	turnID    string
	row       int64 // turns.id
	sid       int64 // sessions.sid

	mu      sync.Mutex
	buf     []Event
	bufSize int
	first   time.Time // when the oldest buffered event was appended
	lastSeq uint64
	done    bool
}

// BeginTurn records a new running turn of session sessionID with its
// prompt, and returns the log its events go to. This process must hold the
// session's lease (CreateSession or Acquire): the lease is what lets
// Recover tell a turn running elsewhere from one whose process died. The
// session's first turn gives it its title (the prompt's first line) unless
// it was renamed. A session runs one turn at a time: a turn still running is
// refused (after a crash, Recover marks it interrupted).
func (s *Store) BeginTurn(ctx context.Context, sessionID, turnID, prompt string) (*TurnLog, error) {
	return s.BeginTurnImages(ctx, sessionID, turnID, prompt, nil)
}

// BeginTurnImages is BeginTurn for a prompt with input images, recorded
// with the turn in the same transaction (by path and hash, never bytes).
func (s *Store) BeginTurnImages(ctx context.Context, sessionID, turnID, prompt string, images []Image) (*TurnLog, error) {
	return s.beginTurn(ctx, nil, sessionID, turnID, prompt, images)
}

// BeginFirstTurn stores session n (as CreateSession does) and begins its
// first turn (as BeginTurnImages does) in one transaction: a session is
// stored with its first turn, and this is one commit before that turn's
// first model request instead of two.
func (s *Store) BeginFirstTurn(ctx context.Context, n NewSession, turnID, prompt string, images []Image) (*TurnLog, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	return s.beginTurn(ctx, &n, n.ID, turnID, prompt, images)
}

// beginTurn is BeginTurnImages, after inserting session create first in
// the same transaction when it is not nil.
func (s *Store) beginTurn(ctx context.Context, create *NewSession, sessionID, turnID, prompt string, images []Image) (*TurnLog, error) {
	if err := checkID("turn", turnID); err != nil {
		return nil, fmt.Errorf("begin turn: %w", err)
	}
	t := &TurnLog{s: s, sessionID: sessionID, turnID: turnID}
	if err := s.prepareHot(ctx); err != nil {
		return nil, fmt.Errorf("begin turn: %w", err)
	}
	now, op := s.now(), "begin turn"
	if create != nil {
		op = "create session" // what fails first for the user
	}
	err := s.write(ctx, op, false, func(tx *sql.Tx) error {
		ctx := inTx(ctx)
		if create != nil {
			if err := s.insertSession(ctx, tx, *create, now); err != nil {
				return err
			}
		}
		return s.beginTurnTx(ctx, tx, t, prompt, images, now)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// beginTurnTx records turn t of its session, running from now, in tx.
func (s *Store) beginTurnTx(ctx context.Context, tx *sql.Tx, t *TurnLog, prompt string, images []Image, now int64) error {
	sessionID, turnID := t.sessionID, t.turnID
	var sid, lo, hi, lastSeq, leasedAt int64
	var turns, renamed int
	var title string
	var h Holder
	err := s.stmt(ctx, tx, qSessionForTurn).QueryRowContext(ctx, sessionID).
		Scan(&sid, &lo, &hi, &turns, &renamed, &title, &lastSeq, &h.Instance, &h.PID, &h.Start, &h.Name, &leasedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return permanent{fmt.Errorf("session %s: %w", sessionID, ErrNotFound)}
	} else if err != nil {
		return err
	}
	if h.zero() {
		return permanent{fmt.Errorf("session %s is not live in this process: acquire it before running a turn", sessionID)}
	}
	if !h.same(s.opts.Holder) {
		return permanent{&BusyError{SessionID: sessionID, Holder: h, Since: ns(leasedAt)}}
	}
	var running string
	err = s.stmt(ctx, tx, qRunningTurn).QueryRowContext(ctx, sid).Scan(&running)
	if err == nil {
		return permanent{fmt.Errorf("session %s still has turn %s running", sessionID, running)}
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	res, err := s.stmt(ctx, tx, qInsertTurn).ExecContext(ctx, sid, turnID, turns+1, prompt, now, lo, hi)
	if constraint(err) {
		return permanent{fmt.Errorf("turn %s already exists in session %s", turnID, sessionID)}
	} else if err != nil {
		return err
	}
	if t.row, err = res.LastInsertId(); err != nil {
		return err
	}
	for i, im := range images {
		if _, err := tx.ExecContext(ctx, `INSERT INTO turn_images (turn, n, path, media_type, size, sha256) VALUES (?, ?, ?, ?, ?, ?)`,
			t.row, i, im.Path, im.MediaType, im.Size, im.SHA256); err != nil {
			return err
		}
	}
	if title == "" && renamed == 0 {
		title = titleLine(prompt)
	}
	t.lastSeq = uint64(lastSeq)
	t.sid = sid
	s.wrote(len(prompt))
	_, err = s.stmt(ctx, tx, qSessionBegun).ExecContext(ctx, title, now, len(prompt), sid)
	return err
}

// ID is the turn's id.
func (t *TurnLog) ID() string { return t.turnID }

// Append adds one event line. Seq must grow strictly within the session
// (the store keeps what the client saw, in order). The line is copied. It
// is written when the buffer is full or old enough, at the latest by
// Complete or End; call Flush when the turn is about to wait (an approval)
// so a crash then loses nothing already shown.
func (t *TurnLog) Append(ctx context.Context, ev Event) error {
	if err := checkEvent(ev); err != nil {
		return fmt.Errorf("append event to turn %s: %w", t.turnID, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return fmt.Errorf("append event to turn %s: the turn has ended", t.turnID)
	}
	if ev.Seq <= t.lastSeq {
		return fmt.Errorf("append event to turn %s: seq %d does not follow %d", t.turnID, ev.Seq, t.lastSeq)
	}
	t.lastSeq = ev.Seq
	if len(t.buf) == 0 {
		t.first = time.Now()
	}
	t.buf = append(t.buf, Event{Seq: ev.Seq, Data: append(json.RawMessage(nil), ev.Data...)})
	t.bufSize += len(ev.Data)
	if len(t.buf) >= flushEvents || t.bufSize >= flushBytes || time.Since(t.first) >= flushAge {
		return t.flushLocked(ctx)
	}
	return nil
}

func checkEvent(ev Event) error {
	d := ev.Data
	if ev.Seq == 0 {
		return errors.New("event without seq")
	}
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return fmt.Errorf("event %d is not a JSON object", ev.Seq)
	}
	return nil
}

// Flush writes the buffered events.
func (t *TurnLog) Flush(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || len(t.buf) == 0 {
		return nil
	}
	return t.flushLocked(ctx)
}

func (t *TurnLog) flushLocked(ctx context.Context) error {
	err := t.s.write(ctx, "write turn events", false, func(tx *sql.Tx) error {
		ctx := inTx(ctx)
		if err := t.checkRunning(ctx, tx); err != nil {
			return err
		}
		return t.insertEvents(ctx, tx, nil)
	})
	if err != nil {
		return err
	}
	t.buf, t.bufSize = t.buf[:0], 0
	return nil
}

func (t *TurnLog) checkRunning(ctx context.Context, tx *sql.Tx) error {
	var st string
	err := t.s.stmt(ctx, tx, qTurnState).QueryRowContext(ctx, t.row).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return permanent{fmt.Errorf("turn %s of session %s: %w (the session was deleted)", t.turnID, t.sessionID, ErrNotFound)}
	} else if err != nil {
		return err
	}
	if TurnState(st) != TurnRunning {
		return permanent{&StateError{SessionID: t.sessionID, TurnID: t.turnID, State: TurnState(st), Want: TurnRunning}}
	}
	return nil
}

// insertEvents writes the buffer and then extra, several rows per
// statement, and moves the session's last_seq and size.
func (t *TurnLog) insertEvents(ctx context.Context, tx *sql.Tx, extra []Event) error {
	all := t.buf
	if len(extra) > 0 {
		all = append(t.buf[:len(t.buf):len(t.buf)], extra...)
	}
	if len(all) == 0 {
		return nil
	}
	var size int64
	args := make([]any, 0, 3*insertRows[0])
	for rest := all; len(rest) > 0; {
		k := rowsFor(len(rest))
		args = args[:0]
		for _, ev := range rest[:k] {
			args = append(args, t.row, int64(ev.Seq), []byte(ev.Data))
			size += int64(len(ev.Data))
		}
		if _, err := t.s.stmt(ctx, tx, builtQueries().insertEvents[k]).ExecContext(ctx, args...); err != nil {
			if constraint(err) {
				return permanent{fmt.Errorf("an event of seq %d to %d of turn %s is stored already", rest[0].Seq, rest[k-1].Seq, t.turnID)}
			}
			return err
		}
		rest = rest[k:]
	}
	t.s.wrote(int(size))
	_, err := t.s.stmt(ctx, tx, qSessionEvents).ExecContext(ctx, int64(all[len(all)-1].Seq), size, t.s.now(), t.sid)
	return err
}

// HistoryUpdate is how a completed turn changes the session's canonical
// history: the new history is (base ++ Append)[Drop:], where base is the
// current history, or empty when Replace is set. A turn that appended its
// messages and trimmed the oldest ones passes Append and Drop; a history
// rewritten as a whole (compaction into a note, session.clear) passes
// Replace. Messages are opaque JSON values, stored verbatim.
type HistoryUpdate struct {
	Append  []json.RawMessage
	Drop    int
	Replace bool
}

// Completion is the outcome of a completed turn.
type Completion struct {
	// Events are the turn's last events (turn.completed among them); they
	// are stored after the buffered ones, in the same transaction.
	Events  []Event
	History HistoryUpdate
	Usage   Usage
	// Answer is the assistant's visible answer (what search finds).
	Answer string
	// Files are the workspace files the turn wrote (what undo reverts).
	Files []filechange.Change
}

// Complete ends the turn as completed: the remaining events, the new
// history, usage and answer are written in one durable transaction (the WAL
// is fsynced before it returns), so the turn is either fully stored or not
// at all. Call it before sending turn.completed to any client.
func (t *TurnLog) Complete(ctx context.Context, c Completion) error {
	return t.end(ctx, "complete turn", TurnCompleted, "", "", c)
}

// TurnEnd is the outcome of a turn that did not complete.
type TurnEnd struct {
	// State is TurnFailed or TurnCancelled.
	State   TurnState
	Code    string
	Message string
	Events  []Event
	Usage   Usage
	// Answer is any partial answer (kept for search).
	Answer string
	// Files are the workspace files the turn wrote before it ended.
	Files []filechange.Change
	// History is a cancelled turn's change of the history (the turn kept
	// as interrupted), applied in the same transaction; a failed turn has
	// none.
	History HistoryUpdate
}

// End ends the turn as failed or cancelled: its events are kept; the
// history is left as it was before the turn, except for a cancelled
// turn's History. Pass a context that the turn's cancellation does not
// cancel (context.WithoutCancel): a cancelled turn must still be recorded
// as cancelled.
func (t *TurnLog) End(ctx context.Context, e TurnEnd) error {
	if e.State != TurnFailed && e.State != TurnCancelled {
		return fmt.Errorf("end turn %s: state %q is not failed or cancelled", t.turnID, e.State)
	}
	if e.State == TurnFailed && (len(e.History.Append) > 0 || e.History.Drop > 0 || e.History.Replace) {
		return fmt.Errorf("end turn %s: a failed turn does not change the history", t.turnID)
	}
	return t.end(ctx, "end turn", e.State, e.Code, e.Message, Completion{Events: e.Events, Usage: e.Usage, Answer: e.Answer, Files: e.Files, History: e.History})
}

func (t *TurnLog) end(ctx context.Context, op string, st TurnState, code, msg string, c Completion) error {
	for _, ev := range c.Events {
		if err := checkEvent(ev); err != nil {
			return fmt.Errorf("%s %s: %w", op, t.turnID, err)
		}
	}
	if err := checkMessages(c.History.Append); err != nil {
		return fmt.Errorf("%s %s: %w", op, t.turnID, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return fmt.Errorf("%s %s: the turn has ended already", op, t.turnID)
	}
	seq := t.lastSeq
	for _, ev := range c.Events {
		if ev.Seq <= seq {
			return fmt.Errorf("%s %s: seq %d does not follow %d", op, t.turnID, ev.Seq, seq)
		}
		seq = ev.Seq
	}
	err := t.s.write(ctx, op, true, func(tx *sql.Tx) error {
		ctx := inTx(ctx)
		if err := t.checkRunning(ctx, tx); err != nil {
			return err
		}
		if err := t.insertEvents(ctx, tx, c.Events); err != nil {
			return err
		}
		if err := insertFiles(ctx, tx, t.row, c.Files); err != nil {
			return err
		}
		for _, f := range c.Files {
			t.s.wrote(len(f.Before))
		}
		if st == TurnCompleted || st == TurnCancelled {
			if err := t.s.applyHistory(ctx, tx, t.sessionID, c.History, t.s.now()); err != nil {
				return err
			}
		}
		_, err := t.s.stmt(ctx, tx, qEndTurn).ExecContext(ctx, string(st), code, msg, c.Answer,
			c.Usage.InputTokens, c.Usage.OutputTokens, c.Usage.TotalTokens, c.Usage.CacheReadTokens, c.Usage.CacheWriteTokens, nullFloat(c.Usage.CostUSD), t.s.now(), t.row)
		if err != nil {
			return err
		}
		_, err = t.s.stmt(ctx, tx, qSessionBytes).ExecContext(ctx, len(c.Answer), t.sid)
		return err
	})
	if err != nil {
		return err
	}
	t.buf, t.bufSize, t.lastSeq, t.done = nil, 0, seq, true
	return nil
}

func checkMessages(msgs []json.RawMessage) error {
	for i, m := range msgs {
		if len(m) == 0 || !json.Valid(m) {
			return fmt.Errorf("history message %d is not valid JSON", i)
		}
	}
	return nil
}

// applyHistory applies u to the session's history window. Messages are
// never renumbered and rows before the window are kept: earlier turns
// remember the window they started from, which is what Fork copies.
func (s *Store) applyHistory(ctx context.Context, tx *sql.Tx, sessionID string, u HistoryUpdate, now int64) error {
	var sid, lo, hi int64
	err := s.stmt(ctx, tx, qHistory).QueryRowContext(ctx, sessionID).Scan(&sid, &lo, &hi)
	if errors.Is(err, sql.ErrNoRows) {
		return permanent{fmt.Errorf("session %s: %w", sessionID, ErrNotFound)}
	} else if err != nil {
		return err
	}
	if u.Replace {
		lo = hi
	}
	if u.Drop < 0 || int64(u.Drop) > hi-lo+int64(len(u.Append)) {
		return permanent{fmt.Errorf("history update drops %d of %d messages", u.Drop, hi-lo+int64(len(u.Append)))}
	}
	var size int64
	args := make([]any, 0, 3*insertRows[0])
	for rest := u.Append; len(rest) > 0; {
		k := rowsFor(len(rest))
		args = args[:0]
		for _, m := range rest[:k] {
			args = append(args, sid, hi, []byte(m))
			hi++
			size += int64(len(m))
		}
		if _, err := s.stmt(ctx, tx, builtQueries().insertMessage[k]).ExecContext(ctx, args...); err != nil {
			return err
		}
		rest = rest[k:]
	}
	s.wrote(int(size))
	lo += int64(u.Drop)
	_, err = s.stmt(ctx, tx, qSessionHistory).ExecContext(ctx, lo, hi, size, now, sid)
	return err
}

// UpdateHistory changes a session's history outside a turn, e.g. on
// session.clear (HistoryUpdate{Replace: true}). The session must have no
// running turn.
func (s *Store) UpdateHistory(ctx context.Context, sessionID string, u HistoryUpdate) error {
	if err := checkMessages(u.Append); err != nil {
		return fmt.Errorf("update history of session %s: %w", sessionID, err)
	}
	if err := s.prepareHot(ctx); err != nil {
		return fmt.Errorf("update history: %w", err)
	}
	return s.write(ctx, "update history", true, func(tx *sql.Tx) error {
		var running string
		err := tx.QueryRowContext(ctx, `SELECT t.turn_id FROM turns t JOIN sessions s ON s.sid = t.sid WHERE s.id = ? AND t.state = 'running'`, sessionID).Scan(&running)
		if err == nil {
			return permanent{fmt.Errorf("session %s has turn %s running", sessionID, running)}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return s.applyHistory(ctx, tx, sessionID, u, s.now())
	})
}
