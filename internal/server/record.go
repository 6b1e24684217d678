package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// Recording a turn in the store (docs/store.md): the turn is begun before
// turn.started, each event is appended with the exact line sent, and the
// terminal event is written — in one durable transaction with the new
// history when the turn completed — before it is handed to the client. A
// turn the store cannot record ends in turn.failed with code store_error,
// and its history is not applied: nothing is lost silently.
//
// The agent hands the record what the turn left with its terminal event
// (agent.TurnEnd: the history's change, the files written, the history
// before the turn), so recording asks the session for nothing. The agent
// has applied the change to its history by then (the next turn, even an
// unrecorded one, goes on from it); when the store refuses the terminal
// event, the record takes it back with agent.Session.Rewind to the
// TurnEnd's mark, which is simpler than holding the history until the
// store confirms and keeps the session as it was.

// recorder is one running turn's record.
type recorder struct {
	log *store.TurnLog
	// answer collects the turn's answer texts (what search finds).
	answer []string
	// failed is the first error of an event write; the buffered events
	// are retried by the turn's end.
	failed error
	// gone is the store's ErrGone when the database was removed before
	// the turn began: the turn runs in memory, nothing of it is written,
	// and its turn.completed says not_stored.
	gone error
}

// storeTimeout bounds one store call made on behalf of a client; the busy
// timeout of the store bounds waits for other processes below it.
const storeTimeout = time.Minute

// beginRecord records the start of p's turn; nil without a store.
func (c *conn) beginRecord(ctx context.Context, s *session, p pending) (*recorder, error) {
	st := c.srv.opts.Store
	if st == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	s.mu.Lock()
	create := s.create
	s.mu.Unlock()
	var tl *store.TurnLog
	var err error
	var n store.NewSession
	if create != nil {
		// Stored with its first turn and the mode it is in, in one
		// transaction.
		n = *create
		n.Mode = s.agent.Mode()
		tl, err = st.BeginFirstTurn(ctx, n, p.turnID, p.prompt, storeImages(p.images))
	} else {
		tl, err = st.BeginTurnImages(ctx, s.id, p.turnID, p.prompt, storeImages(p.images))
	}
	if errors.Is(err, store.ErrGone) {
		return c.unsaved(s, p.turnID, err), nil
	} else if err != nil {
		return nil, err
	}
	if create != nil {
		// From here on session.set_mode and session.configure write to
		// the store themselves; what they answered while the session
		// was being stored went to the agent and to s.create only.
		// (sessionSetMode changes the agent under s.mu while the
		// session is not stored, so the mode read here is its last.)
		s.mu.Lock()
		late, mode := *s.create, s.agent.Mode()
		s.create = nil
		s.mu.Unlock()
		storeLateChanges(ctx, st, c.srv.opts.Logger, s.id, n, late, mode)
	}
	return &recorder{log: tl}, nil
}

// storeLateChanges stores what changed in a new session between the copy
// BeginFirstTurn stored (stored) and the moment it counted as stored (late,
// mode); a failure is logged, the session goes on as configured.
func storeLateChanges(ctx context.Context, st *store.Store, log *slog.Logger, id string, stored, late store.NewSession, mode string) {
	logged := func(what string, err error) {
		if err != nil {
			log.Error("store: "+what+" of a new session", "session", id, "err", err)
		}
	}
	if mode != stored.Mode {
		logged("set the mode", st.SetMode(ctx, id, mode))
	}
	switch {
	case late.Provider != stored.Provider || late.WireAPI != stored.WireAPI || late.BaseURL != stored.BaseURL:
		logged("set the endpoint", st.SetEndpoint(ctx, id, store.Endpoint{Provider: late.Provider, WireAPI: late.WireAPI, BaseURL: late.BaseURL, Model: late.Model}))
	case late.Model != stored.Model:
		logged("set the model", st.SetModel(ctx, id, late.Model))
	}
}

// unsaved is the record of a turn that runs although the session database
// is gone (store.ErrGone): the session goes on in memory, and the client
// is told at once that nothing is saved.
func (c *conn) unsaved(s *session, turnID string, err error) *recorder {
	c.goneNotice(s, turnID, err)
	return &recorder{gone: err}
}

// goneNotice logs and sends the store_error event that says a turn is not
// saved because the session database is gone.
func (c *conn) goneNotice(s *session, turnID string, err error) {
	c.srv.opts.Logger.Error("store: session database gone; the turn is not saved", "session", s.id, "turn", turnID, "err", err)
	c.queue(c.encode(&proto.Error{Header: proto.Header{Type: proto.EventError}, Code: proto.ErrStore,
		Message: fmt.Sprintf("this turn of session %s is not saved: %v", s.id, err)}))
}

// refuseTurn ends a turn that could not be recorded before it ran.
func (c *conn) refuseTurn(s *session, p pending, err error) {
	c.srv.opts.Logger.Error("store: begin turn", "session", s.id, "turn", p.turnID, "err", err)
	started := &proto.TurnStarted{}
	started.TurnID, started.RequestID = p.turnID, p.requestID
	c.sendTurnEvent(s, nil, started, nil)
	failed := &proto.TurnFailed{Code: proto.FailStore,
		Message: fmt.Sprintf("the turn did not run: it could not be recorded in the session database: %v", err)}
	failed.TurnID = p.turnID
	c.sendTurnEvent(s, nil, failed, nil)
}

// sendTurnEvent stamps, records and queues one event of the running turn.
// A terminal event marks the session idle once it is recorded, just before
// the client can see it. end is what the turn left, with the terminal
// event of a recorded turn (nil otherwise).
func (c *conn) sendTurnEvent(s *session, rec *recorder, ev proto.TurnEvent, end *agent.TurnEnd) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if e, ok := ev.(*proto.TurnCompleted); ok && rec != nil && rec.gone != nil {
		e.NotStored = true
	}
	b := c.stamp(s, ev)
	if rec != nil && rec.gone == nil && b != nil {
		b = c.record(s, rec, ev, b, end)
	}
	if terminal(ev) {
		// The session is idle from the client's point of view as soon as
		// it sees the turn's end (session.clear may follow).
		s.mu.Lock()
		s.active, s.cancel = "", nil
		s.mu.Unlock()
	}
	c.queue(b)
}

// record stores ev's line b and returns the line to send: b, or for a
// terminal event that could not be stored, a turn.failed saying so.
func (c *conn) record(s *session, rec *recorder, ev proto.TurnEvent, b []byte, end *agent.TurnEnd) []byte {
	line := store.Event{Seq: ev.Session().Seq, Data: b}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
	defer cancel()
	switch e := ev.(type) {
	case *proto.ToolProgress:
		return b // transient: never stored
	case *proto.TurnCompleted, *proto.TurnFailed, *proto.TurnCancelled:
		return c.recordEnd(ctx, s, rec, ev, line, end)
	case *proto.TodoUpdated:
		c.storeTodos(ctx, s, e)
	case *proto.AssistantCompleted:
		if e.Content != "" {
			rec.answer = append(rec.answer, e.Content)
		}
	}
	c.appendEvent(ctx, s, rec, ev, line)
	return b
}

// ending is what tells a turn's three terminal events apart when they
// are recorded.
type ending struct {
	state store.TurnState
	// kept: the turn's history is written with its end, and taken back
	// when the store refuses it. The agent keeps a completed turn, and a
	// cancelled one marked interrupted; a failed turn's history is as it
	// was before the turn.
	kept          bool
	code, message string       // turn.failed's
	usage         *proto.Usage // turn.completed's
	// op is the log message of a refused record, and lost what the
	// turn.failed sent in its place says before the store's error.
	op, lost string
}

func endingOf(ev proto.TurnEvent) ending {
	switch e := ev.(type) {
	case *proto.TurnCompleted:
		return ending{state: store.TurnCompleted, kept: true, usage: e.Usage, op: "store: complete turn",
			lost: "the turn completed, but it could not be saved to the session database, so it is not part of the session"}
	case *proto.TurnFailed:
		return ending{state: store.TurnFailed, code: e.Code, message: e.Message, op: "store: end turn",
			lost: fmt.Sprintf("the turn failed (%s: %s), and it could not be saved to the session database", e.Code, e.Message)}
	default: // *proto.TurnCancelled
		return ending{state: store.TurnCancelled, kept: true, op: "store: end turn",
			lost: "the turn was cancelled, and it could not be saved to the session database"}
	}
}

// recordEnd writes the turn's terminal event (line), in one transaction
// with the turn's files and, when the turn keeps it, its history, and
// returns the line to send: line itself, turn.completed marked not_stored
// when the database is gone (any end stays in the session's memory then),
// or a store failure, the history taken back.
func (c *conn) recordEnd(ctx context.Context, s *session, rec *recorder, ev proto.TurnEvent, line store.Event, end *agent.TurnEnd) []byte {
	k := endingOf(ev)
	turnID := ev.Turn().TurnID
	var err error
	if k.kept {
		err = end.HistoryErr
	}
	if err == nil {
		err = rec.writeEnd(ctx, k, line, end)
	}
	if err == nil {
		return line.Data
	}
	if errors.Is(err, store.ErrGone) {
		c.goneNotice(s, turnID, err)
		if e, ok := ev.(*proto.TurnCompleted); ok {
			e.NotStored = true
			return c.encode(e)
		}
		return line.Data
	}
	c.srv.opts.Logger.Error(k.op, "session", s.id, "turn", turnID, "err", err)
	if k.kept {
		s.agent.Rewind(end.Before)
	}
	return c.storeFailure(ctx, s, rec, turnID, line.Seq, fmt.Sprintf("%s: %v", k.lost, err))
}

// writeEnd is the store's write of a turn's end: Complete for a completed
// turn (durable, with the usage), End for the others.
func (r *recorder) writeEnd(ctx context.Context, k ending, line store.Event, end *agent.TurnEnd) error {
	events := []store.Event{line}
	var history store.HistoryUpdate
	if k.kept {
		history = store.HistoryUpdate{Append: end.Appended, Drop: end.Drop}
	}
	if k.state == store.TurnCompleted {
		return r.log.Complete(ctx, store.Completion{Events: events, History: history, Usage: storeUsage(k.usage), Answer: r.answerText(), Files: end.Files})
	}
	return r.log.End(ctx, store.TurnEnd{State: k.state, Code: k.code, Message: k.message, Events: events, Answer: r.answerText(),
		Files: end.Files, History: history})
}

// appendEvent appends a turn's event (line) to its log, flushed when the
// turn now waits for an approval; the first write error is kept in
// rec.failed (retried when the turn ends).
func (c *conn) appendEvent(ctx context.Context, s *session, rec *recorder, ev proto.TurnEvent, line store.Event) {
	err := rec.log.Append(ctx, line)
	if err == nil {
		if _, waits := ev.(*proto.ApprovalRequested); waits {
			// The turn waits for a person now: what was shown is
			// written before the wait.
			err = rec.log.Flush(ctx)
		}
	}
	if err != nil && rec.failed == nil {
		rec.failed = err
		c.srv.opts.Logger.Error("store: write turn events (retried when the turn ends)", "session", s.id, "turn", ev.Turn().TurnID, "err", err)
	}
}

// storeFailure is the turn.failed sent in place of a terminal event the
// store refused; it is offered to the store too (the turn stays running in
// the file otherwise, and becomes interrupted at the next start).
func (c *conn) storeFailure(ctx context.Context, s *session, rec *recorder, turnID string, seq uint64, msg string) []byte {
	f := &proto.TurnFailed{Code: proto.FailStore, Message: msg}
	f.TurnID, f.SessionID, f.Seq = turnID, s.id, seq
	b := c.encode(f)
	err := rec.log.End(ctx, store.TurnEnd{State: store.TurnFailed, Code: proto.FailStore, Message: msg,
		Events: []store.Event{{Seq: seq, Data: b}}, Answer: rec.answerText()})
	if err != nil {
		c.srv.opts.Logger.Debug("store: record the failure", "session", s.id, "turn", turnID, "err", err)
	}
	return b
}

// ended is the agent.Ended of r's turn: its terminal event is recorded
// with what the turn left. nil when nothing is recorded (no store, or
// the database is gone), so the agent does not encode the history's
// change for no one.
func (r *recorder) ended(c *conn, s *session) agent.Ended {
	if r == nil || r.gone != nil {
		return nil
	}
	return func(ev proto.TurnEvent, end agent.TurnEnd) { c.sendTurnEvent(s, r, ev, &end) }
}

func (r *recorder) answerText() string { return strings.Join(r.answer, "\n\n") }

func storeUsage(u *proto.Usage) store.Usage {
	if u == nil {
		return store.Usage{}
	}
	return store.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, CostUSD: u.CostUSD}
}

// storeChange runs change, a change of the stored session made for a
// client's request, bounded by storeTimeout and not cancelled with the
// connection. When the session database refuses it, it answers the
// request, saying what was not done (notDone: "the mode was not
// changed"), and returns false.
func (c *conn) storeChange(requestID, notDone string, change func(ctx context.Context) error) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
	err := change(ctx)
	cancel()
	if err != nil {
		c.reqError(requestID, storeErrorCode(err), fmt.Sprintf("%s: the session database refused the change: %v", notDone, err), false)
		return false
	}
	return true
}

// storeErrorCode maps a store error to the request error code that
// answers it.
func storeErrorCode(err error) string {
	var busy *store.BusyError
	switch {
	case errors.As(err, &busy):
		return proto.ErrSessionBusy
	case errors.Is(err, store.ErrNotFound):
		return proto.ErrSessionNotFound
	}
	return proto.ErrStore
}
