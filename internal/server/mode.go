package server

import (
	"context"
	"fmt"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// A session's mode and todo list (docs/runtime.md): session.set_mode, the
// todo.updated events a turn's todo_write calls make, and what a resume
// and a clear do with both.

func (c *conn) sessionSetMode(s *session, m *proto.SessionSetMode) {
	if !agent.ValidMode(m.Mode) {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("session.set_mode: mode %q is not %q or %q", m.Mode, proto.ModeDefault, proto.ModePlan), false)
		return
	}
	s.mu.Lock()
	if s.create != nil {
		// Not stored yet: the mode goes with its first turn. Changed
		// under s.mu, so beginRecord, which reads it there as it marks
		// the session stored, sees it (see storeLateChanges).
		_ = s.agent.SetMode(m.Mode) // checked above
		s.mu.Unlock()
		c.reply(m.RequestID, &proto.SessionMode{Mode: m.Mode}, s)
		return
	}
	s.mu.Unlock()
	if st := c.srv.opts.Store; st != nil {
		if !c.storeChange(m.RequestID, "the mode was not changed", func(ctx context.Context) error { return st.SetMode(ctx, s.id, m.Mode) }) {
			return
		}
	}
	_ = s.agent.SetMode(m.Mode) // checked above
	c.reply(m.RequestID, &proto.SessionMode{Mode: m.Mode}, s)
}

// storeTodos records a todo.updated list as the session's latest; a
// failure is logged (the event itself is still recorded with the turn).
func (c *conn) storeTodos(ctx context.Context, s *session, e *proto.TodoUpdated) {
	items := make([]store.TodoItem, len(e.Items))
	for i, it := range e.Items {
		items[i] = store.TodoItem{Content: it.Content, Status: it.Status}
	}
	if err := c.srv.opts.Store.SetTodos(ctx, s.id, items); err != nil {
		c.srv.opts.Logger.Error("store: set todo list", "session", s.id, "err", err)
	}
}

// resumeState gives a resumed agent session its stored mode and todo list
// and returns them for session.resumed: the mode when it is not the
// default, the list when there is one.
func resumeState(ctx context.Context, st *store.Store, ag *agent.Session, x store.Session) (string, []proto.TodoItem, error) {
	mode := ""
	if x.Mode != "" && x.Mode != proto.ModeDefault {
		if err := ag.SetMode(x.Mode); err != nil {
			return "", nil, fmt.Errorf("stored mode: %w", err)
		}
		mode = x.Mode
	}
	items, err := st.Todos(ctx, x.ID)
	if err != nil || len(items) == 0 {
		return mode, nil, err
	}
	list := make([]proto.TodoItem, len(items))
	for i, it := range items {
		list[i] = proto.TodoItem{Content: it.Content, Status: it.Status}
	}
	ag.SetTodos(list)
	return mode, list, nil
}
