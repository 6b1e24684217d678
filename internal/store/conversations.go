package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AgentConversation is a stored conversation with a delegated agent (the
// registry in internal/delegation decides what it means).
type AgentConversation struct {
	SessionID string
	Handle    string
	Agent     string
	N         int
	Cwd       string
	// VendorID is the agent CLI's own session id ("" once closed).
	VendorID      string
	Turns         int
	Created, Used time.Time
	// Closed is zero while live; ClosedWhy says why it closed.
	Closed    time.Time
	ClosedWhy string
}

// maxConversationField bounds the text fields of a conversation.
const maxConversationField = 4096

// AgentConversations lists the conversations of session id (every
// session's when id is ""), oldest first. A session that does not exist
// has none.
func (s *Store) AgentConversations(ctx context.Context, id string) ([]AgentConversation, error) {
	var out []AgentConversation
	err := s.read(ctx, "read agent conversations", func(tx *sql.Tx) error {
		q := `SELECT s.id, c.handle, c.agent, c.n, c.cwd, c.vendor_id, c.turns, c.created_ns, c.used_ns, c.closed_ns, c.closed_why
			FROM agent_conversations c JOIN sessions s ON s.sid = c.sid`
		args := []any{}
		if id != "" {
			q += ` WHERE s.id = ?`
			args = append(args, id)
		}
		var err error
		out, err = queryAll(ctx, tx, func(rows *sql.Rows) (AgentConversation, error) {
			var c AgentConversation
			var created, used, closed int64
			err := rows.Scan(&c.SessionID, &c.Handle, &c.Agent, &c.N, &c.Cwd, &c.VendorID, &c.Turns, &created, &used, &closed, &c.ClosedWhy)
			c.Created, c.Used, c.Closed = ns(created), ns(used), ns(closed)
			return c, err
		}, q+` ORDER BY s.sid, c.created_ns, c.agent, c.n`, args...)
		return err
	})
	return out, err
}

// PutAgentConversation inserts or replaces a conversation of its session,
// which must exist (ErrNotFound otherwise).
func (s *Store) PutAgentConversation(ctx context.Context, c AgentConversation) error {
	if err := checkID("session", c.SessionID); err != nil {
		return fmt.Errorf("record agent conversation: %w", err)
	}
	for _, f := range []string{c.Handle, c.Agent, c.Cwd, c.VendorID, c.ClosedWhy} {
		if len(f) > maxConversationField {
			return fmt.Errorf("record agent conversation: a field of %d bytes is longer than %d", len(f), maxConversationField)
		}
	}
	if c.Handle == "" || c.Agent == "" {
		return errors.New("record agent conversation: empty handle or agent")
	}
	unix := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixNano()
	}
	return s.write(ctx, "record agent conversation", false, func(tx *sql.Tx) error {
		var sid int64
		err := tx.QueryRowContext(ctx, `SELECT sid FROM sessions WHERE id = ?`, c.SessionID).Scan(&sid)
		if errors.Is(err, sql.ErrNoRows) {
			return permanent{fmt.Errorf("session %s: %w", c.SessionID, ErrNotFound)}
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agent_conversations (sid, handle, agent, n, cwd, vendor_id, turns, created_ns, used_ns, closed_ns, closed_why)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (sid, handle) DO UPDATE SET agent = excluded.agent, n = excluded.n, cwd = excluded.cwd, vendor_id = excluded.vendor_id,
				turns = excluded.turns, created_ns = excluded.created_ns, used_ns = excluded.used_ns, closed_ns = excluded.closed_ns, closed_why = excluded.closed_why`,
			sid, c.Handle, c.Agent, c.N, c.Cwd, c.VendorID, c.Turns, unix(c.Created), unix(c.Used), unix(c.Closed), c.ClosedWhy)
		return err
	})
}
