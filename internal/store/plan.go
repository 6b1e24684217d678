package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// A session's mode and todo list (docs/store.md): the latest of each is
// kept on the session's row, so a resume starts where the session was.

// Session modes.
const (
	ModeDefault = "default"
	ModePlan    = "plan"
)

// TodoItem is one entry of a session's todo list.
type TodoItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// SetMode records a session's mode.
func (s *Store) SetMode(ctx context.Context, id, mode string) error {
	if mode != ModeDefault && mode != ModePlan {
		return fmt.Errorf("set mode of session %s: mode %q is not %s or %s", id, mode, ModeDefault, ModePlan)
	}
	return s.write(ctx, "set session mode", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET mode = ?, updated_ns = ? WHERE id = ?`, mode, s.now(), id))(id)
	})
}

// SetTodos records a session's latest todo list (nil or empty: none).
func (s *Store) SetTodos(ctx context.Context, id string, items []TodoItem) error {
	if items == nil {
		items = []TodoItem{}
	}
	b, err := json.Marshal(items)
	if err != nil {
		return fmt.Errorf("set todos of session %s: %w", id, err)
	}
	return s.write(ctx, "set session todos", false, func(tx *sql.Tx) error {
		return mustAffect(tx.ExecContext(ctx, `UPDATE sessions SET todos = ? WHERE id = ?`, string(b), id))(id)
	})
}

// Todos returns a session's latest todo list (empty when it has none).
func (s *Store) Todos(ctx context.Context, id string) ([]TodoItem, error) {
	var raw string
	err := s.read(ctx, "read session todos", func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT todos FROM sessions WHERE id = ?`, id).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var items []TodoItem
	if err := json.Unmarshal([]byte(raw), &items); err != nil {
		return nil, fmt.Errorf("session %s: stored todo list: %w", id, err)
	}
	return items, nil
}
