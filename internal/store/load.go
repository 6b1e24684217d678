package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
)

// LoadOptions bound what Load returns.
type LoadOptions struct {
	// TailTurns, when > 0, returns only the last TailTurns turns.
	TailTurns int
	// MaxEventBytes, when > 0, stops adding earlier turns once their events
	// reach this many bytes (the newest turn is always returned), so the
	// result fits a protocol frame.
	MaxEventBytes int
}

// Loaded is what a client needs to resume a session: the summary, the
// canonical history to hand back to the model, and the turns with their
// events to redraw the transcript.
type Loaded struct {
	Session Session           `json:"session"`
	History []json.RawMessage `json:"history"`
	// Turns are the loaded turns, oldest first, with their events.
	Turns []Turn `json:"turns"`
	// Before, when > 0, is the N of the oldest loaded turn: earlier turns
	// exist and Turns(ctx, id, Before, limit) returns them.
	Before int `json:"before,omitempty"`
}

// Load reads a session for resuming, in one consistent snapshot.
func (s *Store) Load(ctx context.Context, id string, o LoadOptions) (Loaded, error) {
	var l Loaded
	err := s.read(ctx, "load session", func(tx *sql.Tx) error {
		x, sid, err := getSession(ctx, tx, id)
		if err != nil {
			return permanent{err}
		}
		l = Loaded{Session: x}
		if l.History, err = history(ctx, tx, sid); err != nil {
			return err
		}
		l.Turns, l.Before, err = turnsBefore(ctx, tx, sid, 0, o.TailTurns, o.MaxEventBytes, true)
		return err
	})
	return l, err
}

// History returns a session's canonical history.
func (s *Store) History(ctx context.Context, id string) ([]json.RawMessage, error) {
	var h []json.RawMessage
	err := s.read(ctx, "read history", func(tx *sql.Tx) error {
		_, sid, err := getSession(ctx, tx, id)
		if err != nil {
			return permanent{err}
		}
		h, err = history(ctx, tx, sid)
		return err
	})
	return h, err
}

func history(ctx context.Context, tx *sql.Tx, sid int64) ([]json.RawMessage, error) {
	rows, err := tx.QueryContext(ctx, `SELECT m.data FROM messages m JOIN sessions s ON s.sid = m.sid
		WHERE m.sid = ? AND m.pos >= s.hist_lo AND m.pos < s.hist_hi ORDER BY m.pos`, sid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	h := []json.RawMessage{}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		h = append(h, b)
	}
	return h, rows.Err()
}

// Turns returns up to limit turns (all when limit <= 0) with their events,
// among those whose N is below before (all when before <= 0), oldest first,
// and the cursor of the next page back (0 at the first turn).
func (s *Store) Turns(ctx context.Context, id string, before, limit int) ([]Turn, int, error) {
	var (
		ts   []Turn
		next int
	)
	err := s.read(ctx, "read turns", func(tx *sql.Tx) error {
		_, sid, err := getSession(ctx, tx, id)
		if err != nil {
			return permanent{err}
		}
		ts, next, err = turnsBefore(ctx, tx, sid, before, limit, 0, true)
		return err
	})
	return ts, next, err
}

// Outline returns every turn of a session without its events, oldest
// first: what a picker of earlier prompts (rewind) shows.
func (s *Store) Outline(ctx context.Context, id string) ([]Turn, error) {
	var ts []Turn
	err := s.read(ctx, "read turns", func(tx *sql.Tx) error {
		_, sid, err := getSession(ctx, tx, id)
		if err != nil {
			return permanent{err}
		}
		ts, _, err = turnsBefore(ctx, tx, sid, 0, 0, 0, false)
		return err
	})
	return ts, err
}

const turnCols = `id, turn_id, n, prompt, answer, state, error_code, error_msg, input_tokens, output_tokens, total_tokens,
	cache_read_tokens, cache_write_tokens, cost_usd, started_ns, ended_ns, undone_ns`

func scanTurn(r rowScanner) (Turn, int64, error) {
	var (
		t                      Turn
		row                    int64
		st                     string
		started, ended, undone int64
		cost                   sql.NullFloat64
	)
	err := r.Scan(&row, &t.ID, &t.N, &t.Prompt, &t.Answer, &st, &t.ErrorCode, &t.ErrorMessage,
		&t.Usage.InputTokens, &t.Usage.OutputTokens, &t.Usage.TotalTokens, &t.Usage.CacheReadTokens, &t.Usage.CacheWriteTokens, &cost,
		&started, &ended, &undone)
	t.State, t.Started, t.Ended, t.Undone = TurnState(st), ns(started), ns(ended), ns(undone)
	if cost.Valid {
		t.Usage.CostUSD = &cost.Float64
	}
	return t, row, err
}

// nullFloat is v for a nullable column.
func nullFloat(v *float64) sql.NullFloat64 {
	if v == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *v, Valid: true}
}

// SessionUsage is the usage of all of a session's stored turns added up;
// its CostUSD sums the turns that had a price (nil when none had).
func (s *Store) SessionUsage(ctx context.Context, id string) (Usage, error) {
	var (
		u    Usage
		cost sql.NullFloat64
	)
	err := s.retry(ctx, "sum session usage", func() error {
		return s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(t.input_tokens), 0), COALESCE(SUM(t.output_tokens), 0), COALESCE(SUM(t.total_tokens), 0),
				COALESCE(SUM(t.cache_read_tokens), 0), COALESCE(SUM(t.cache_write_tokens), 0), SUM(t.cost_usd)
			FROM turns t JOIN sessions s ON s.sid = t.sid WHERE s.id = ?`, id).
			Scan(&u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &cost)
	})
	if cost.Valid {
		u.CostUSD = &cost.Float64
	}
	return u, err
}

// undidFiles loads the files an undo of turn row put back.
func undidFiles(ctx context.Context, tx *sql.Tx, row int64) ([]UndoneFile, error) {
	return queryAll(ctx, tx, func(rows *sql.Rows) (UndoneFile, error) {
		var f UndoneFile
		var existed bool
		err := rows.Scan(&f.Path, &existed)
		f.Removed = !existed
		return f, err
	}, `SELECT path, existed FROM turn_files WHERE turn = ? ORDER BY n`, row)
}

// turnImages loads the input images of turn row's prompt.
func turnImages(ctx context.Context, tx *sql.Tx, row int64) ([]Image, error) {
	return queryAll(ctx, tx, func(rows *sql.Rows) (Image, error) {
		var im Image
		err := rows.Scan(&im.Path, &im.MediaType, &im.Size, &im.SHA256)
		return im, err
	}, `SELECT path, media_type, size, sha256 FROM turn_images WHERE turn = ? ORDER BY n`, row)
}

// turnsBefore loads turns newest first until limit or maxBytes, then
// returns them oldest first with the cursor of the rest; withEvents says
// whether to read their events.
func turnsBefore(ctx context.Context, tx *sql.Tx, sid int64, before, limit, maxBytes int, withEvents bool) ([]Turn, int, error) {
	ts, rids, err := newestTurns(ctx, tx, sid, before, limit)
	if err != nil {
		return nil, 0, err
	}
	if !withEvents {
		slices.Reverse(ts)
		return ts, 0, nil
	}
	ev, err := tx.PrepareContext(ctx, `SELECT seq, data FROM events WHERE turn = ? ORDER BY seq`)
	if err != nil {
		return nil, 0, err
	}
	defer ev.Close()
	total := 0
	kept := 0
	for i := range ts {
		var size int
		if ts[i].Events, size, err = turnEvents(ctx, ev, rids[i]); err != nil {
			return nil, 0, err
		}
		total += size
		if !ts[i].Undone.IsZero() {
			if ts[i].Undid, err = undidFiles(ctx, tx, rids[i]); err != nil {
				return nil, 0, err
			}
		}
		if ts[i].Images, err = turnImages(ctx, tx, rids[i]); err != nil {
			return nil, 0, err
		}
		kept = i + 1
		if maxBytes > 0 && total >= maxBytes {
			break
		}
	}
	ts = ts[:kept]
	slices.Reverse(ts)
	next := 0
	if len(ts) > 0 && ts[0].N > 1 {
		next = ts[0].N
	}
	return ts, next, nil
}

// newestTurns reads session sid's turns before turn number before (all of
// them when 0), newest first, at most limit (no limit when 0), with the
// row ids their events are kept under.
func newestTurns(ctx context.Context, tx *sql.Tx, sid int64, before, limit int) ([]Turn, []int64, error) {
	q := `SELECT ` + turnCols + ` FROM turns WHERE sid = ?`
	args := []any{sid}
	if before > 0 {
		q += ` AND n < ?`
		args = append(args, before)
	}
	q += ` ORDER BY n DESC`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		ts   []Turn
		rids []int64
	)
	for rows.Next() {
		t, row, err := scanTurn(rows)
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, t)
		rids = append(rids, row)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return ts, rids, nil
}

// turnEvents reads the events of the turn in row rid with ev (the
// prepared events query), in order, and their total size in bytes.
func turnEvents(ctx context.Context, ev *sql.Stmt, rid int64) ([]Event, int, error) {
	rows, err := ev.QueryContext(ctx, rid)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Event
	size := 0
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
		size += len(e.Data)
	}
	return out, size, rows.Err()
}

// scanEvent reads an event row: seq, data.
func scanEvent(rows *sql.Rows) (Event, error) {
	var seq int64
	var b []byte
	err := rows.Scan(&seq, &b)
	return Event{Seq: uint64(seq), Data: b}, err
}

// Turn returns one turn with its events.
func (s *Store) Turn(ctx context.Context, sessionID, turnID string) (Turn, error) {
	var t Turn
	err := s.read(ctx, "read turn", func(tx *sql.Tx) error {
		_, sid, err := getSession(ctx, tx, sessionID)
		if err != nil {
			return permanent{err}
		}
		var row int64
		t, row, err = scanTurn(tx.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns WHERE sid = ? AND turn_id = ?`, sid, turnID))
		if err == sql.ErrNoRows {
			return permanent{fmt.Errorf("turn %s of session %s: %w", turnID, sessionID, ErrNotFound)}
		} else if err != nil {
			return err
		}
		if !t.Undone.IsZero() {
			if t.Undid, err = undidFiles(ctx, tx, row); err != nil {
				return err
			}
		}
		if t.Images, err = turnImages(ctx, tx, row); err != nil {
			return err
		}
		t.Events, err = queryAll(ctx, tx, scanEvent, `SELECT seq, data FROM events WHERE turn = ? ORDER BY seq`, row)
		return err
	})
	return t, err
}
