package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scv-agent/scv/internal/filechange"
)

// MaxTurnFileBytes bounds the earlier content kept per file; a larger one
// is stored without it, as not undoable.
const MaxTurnFileBytes = 1 << 20

// Undoable is the last turn of a session whose writes can be undone.
type Undoable struct {
	TurnID string
	Files  []filechange.Change
}

func insertFiles(ctx context.Context, tx *sql.Tx, turn int64, files []filechange.Change) error {
	for i, f := range files {
		before, unkept := f.Before, f.Unkept
		if unkept == "" && len(before) > MaxTurnFileBytes {
			before, unkept = nil, fmt.Sprintf("it had %d bytes before the turn, more than the %d undo keeps", len(before), MaxTurnFileBytes)
		}
		if unkept != "" || !f.Existed {
			before = nil
		} else if before == nil {
			before = []byte{}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO turn_files (turn, n, path, existed, before, unkept, after) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			turn, i, f.Path, f.Existed, before, unkept, f.After); err != nil {
			return err
		}
	}
	return nil
}

// LastUndoable returns the session's latest ended turn that wrote files
// and was not undone; ErrNotFound when there is none (or no such session).
func (s *Store) LastUndoable(ctx context.Context, sessionID string) (Undoable, error) {
	var u Undoable
	err := s.read(ctx, "find the turn to undo", func(tx *sql.Tx) error {
		u = Undoable{}
		var row int64
		err := tx.QueryRowContext(ctx, `SELECT t.id, t.turn_id FROM turns t JOIN sessions s ON s.sid = t.sid
			WHERE s.id = ? AND t.state != 'running' AND t.undone_ns = 0 AND EXISTS (SELECT 1 FROM turn_files f WHERE f.turn = t.id)
			ORDER BY t.n DESC LIMIT 1`, sessionID).Scan(&row, &u.TurnID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		} else if err != nil {
			return err
		}
		u.Files, err = queryAll(ctx, tx, func(rows *sql.Rows) (filechange.Change, error) {
			var f filechange.Change
			err := rows.Scan(&f.Path, &f.Existed, &f.Before, &f.Unkept, &f.After)
			if f.Existed && f.Unkept == "" && f.Before == nil {
				f.Before = []byte{} // an empty file, as it was
			}
			return f, err
		}, `SELECT path, existed, before, unkept, after FROM turn_files WHERE turn = ? ORDER BY n`, row)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Undoable{}, fmt.Errorf("session %s has no turn to undo: %w", sessionID, ErrNotFound)
	}
	return u, err
}

// MarkUndone records that turn turnID's writes were undone, and appends
// note (a history message telling the model) to the session's history, in
// one transaction.
func (s *Store) MarkUndone(ctx context.Context, sessionID, turnID string, note json.RawMessage) error {
	var add []json.RawMessage
	if note != nil {
		add = []json.RawMessage{note}
	}
	if err := checkMessages(add); err != nil {
		return fmt.Errorf("mark turn %s undone: %w", turnID, err)
	}
	// The history statements are prepared outside the write, as
	// UpdateHistory does: preparing them inside it would wait for itself.
	if err := s.prepareHot(ctx); err != nil {
		return fmt.Errorf("mark turn %s undone: %w", turnID, err)
	}
	return s.write(ctx, "mark turn undone", true, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE turns SET undone_ns = ? WHERE turn_id = ? AND undone_ns = 0 AND sid = (SELECT sid FROM sessions WHERE id = ?)`, s.now(), turnID, sessionID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return permanent{fmt.Errorf("turn %s of session %s: %w (or undone already)", turnID, sessionID, ErrNotFound)}
		}
		if len(add) == 0 {
			return nil
		}
		return s.applyHistory(ctx, tx, sessionID, HistoryUpdate{Append: add}, s.now())
	})
}

// SetModel records the model a session's next turns use (a resume takes
// it).
func (s *Store) SetModel(ctx context.Context, id, model string) error {
	if model == "" {
		return fmt.Errorf("set model of session %s: empty model", id)
	}
	return s.write(ctx, "set session model", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET model = ?, updated_ns = ? WHERE id = ?`, model, s.now(), id))(id)
	})
}

// Endpoint is what a session runs with: its provider profile, wire API,
// base URL and model (never a key).
type Endpoint struct {
	Provider, WireAPI, BaseURL, Model string
}

// SetEndpoint records the endpoint a session's next turns use, when a
// resume moved it (a later resume takes it).
func (s *Store) SetEndpoint(ctx context.Context, id string, e Endpoint) error {
	if e.Provider == "" || e.Model == "" {
		return fmt.Errorf("set endpoint of session %s: empty provider or model", id)
	}
	return s.write(ctx, "set session endpoint", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET provider = ?, wire_api = ?, base_url = ?, model = ?, updated_ns = ? WHERE id = ?`,
			e.Provider, e.WireAPI, e.BaseURL, e.Model, s.now(), id))(id)
	})
}
