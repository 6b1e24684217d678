package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scv-agent/scv/internal/proto"
)

// DefaultCancelWait bounds how long RunTurn waits for a cancelled turn to
// end.
const DefaultCancelWait = 10 * time.Second

// Errors of RunTurn (the turn's own end is an event, not an error).
var (
	// ErrNotStarted: ctx ended before the server said which turn it
	// started, so there was nothing to cancel by id.
	ErrNotStarted = errors.New("interrupted before the turn started")
	// ErrCancelTimeout: the turn was cancelled and did not end within
	// the wait.
	ErrCancelTimeout = errors.New("the cancelled turn did not end in time")
)

// Turn is one turn a client runs on a connection.
type Turn struct {
	// Start is the turn.start to send; its request_id is chosen when
	// empty.
	Start proto.TurnStart
	// On, if set, sees every event that arrives until the turn ends,
	// the ending one included: the turn's own events, the answer to its
	// start, and the connection's other events in between (a turn event
	// of another turn is skipped). It runs on RunTurn's goroutine, so it
	// may answer approvals on the connection.
	On func(proto.Event)
	// OnCancel, if set, is called once when ctx ends and the turn is
	// being cancelled.
	OnCancel func()
	// CancelWait bounds the wait for a cancelled turn (DefaultCancelWait).
	CancelWait time.Duration
}

// RunTurn starts t on conn and returns the event that ended it:
// turn.completed, turn.failed or turn.cancelled, or the error event that
// refused its start (answering its request_id) or ended the connection
// (fatal). When ctx ends the turn is cancelled (turn.cancel with its id)
// and RunTurn waits up to t.CancelWait for its end. An error means the
// turn's end was not seen: the connection ended, ErrNotStarted, or
// ErrCancelTimeout.
func RunTurn(ctx context.Context, conn *Conn, t Turn) (proto.Event, error) {
	if t.Start.RequestID == "" {
		t.Start.RequestID = conn.newID()
	}
	if t.CancelWait <= 0 {
		t.CancelWait = DefaultCancelWait
	}
	if err := conn.Send(&t.Start); err != nil {
		return nil, err
	}
	var (
		turnID   string
		done     = ctx.Done()
		deadline <-chan time.Time
	)
	for {
		select {
		case ev, ok := <-conn.Events():
			if !ok {
				return nil, fmt.Errorf("the connection ended before the turn did: %w", conn.Err())
			}
			if te, isTurn := ev.(proto.TurnEvent); isTurn && turnID != "" && te.Turn().TurnID != turnID {
				continue
			}
			if id, ok := startedTurn(ev, t.Start.RequestID); ok {
				turnID = id
			}
			if t.On != nil {
				t.On(ev)
			}
			if turnEnded(ev, turnID, t.Start.RequestID) {
				return ev, nil
			}
		case <-done:
			done = nil
			if turnID == "" {
				return nil, ErrNotStarted
			}
			if t.OnCancel != nil {
				t.OnCancel()
			}
			_ = conn.Send(&proto.TurnCancel{SessionID: t.Start.SessionID, TurnID: turnID})
			deadline = time.After(t.CancelWait)
		case <-deadline:
			return nil, ErrCancelTimeout
		}
	}
}

// startedTurn is the id of the turn the answer ev to request names: a
// turn.started (a turn's first event echoes its start's request_id), or a
// queued turn's queue id (the turn runs under it).
func startedTurn(ev proto.Event, request string) (string, bool) {
	switch e := ev.(type) {
	case *proto.TurnStarted:
		if e.RequestID == request && e.TurnID != "" {
			return e.TurnID, true
		}
	case *proto.QueueEnqueued:
		if e.RequestID == request {
			return e.QueueID, true
		}
	}
	return "", false
}

// turnEnded says ev ends the turn: its terminal event, an error refusing
// its start, or a fatal error.
func turnEnded(ev proto.Event, turnID, request string) bool {
	switch e := ev.(type) {
	case *proto.TurnCompleted, *proto.TurnFailed, *proto.TurnCancelled:
		return turnID != "" && ev.(proto.TurnEvent).Turn().TurnID == turnID
	case *proto.Error:
		return e.Fatal || e.RequestID == request
	}
	return false
}
