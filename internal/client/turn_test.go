package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// scripted is an in-process server that answers each client line with
// reply(line) and records the lines' types.
type scripted struct {
	mu    sync.Mutex
	types []string
	reply func(m map[string]any) []proto.Event
}

func (s *scripted) serve(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return err
		}
		s.mu.Lock()
		s.types = append(s.types, m["type"].(string))
		s.mu.Unlock()
		for _, ev := range s.reply(m) {
			b, err := proto.EncodeEvent(ev)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *scripted) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.types...)
}

func head(turn, request string, seq uint64) proto.TurnHeader {
	return proto.TurnHeader{SessionHeader: proto.SessionHeader{Header: proto.Header{RequestID: request}, SessionID: "s1", Seq: seq}, TurnID: turn}
}

func runScripted(t *testing.T, ctx context.Context, reply func(m map[string]any) []proto.Event, turn client.Turn) (proto.Event, []proto.Event, *scripted, error) {
	t.Helper()
	s := &scripted{reply: reply}
	p := client.ServeInProcess(t.Context(), s.serve)
	defer p.Close()
	var seen []proto.Event
	turn.Start.SessionID = "s1"
	on := turn.On
	turn.On = func(ev proto.Event) {
		seen = append(seen, ev)
		if on != nil {
			on(ev)
		}
	}
	end, err := client.RunTurn(ctx, p.Conn, turn)
	return end, seen, s, err
}

// A turn's events reach On in order, another turn's are skipped, and the
// terminal event is returned.
func TestRunTurnCompletes(t *testing.T) {
	end, seen, _, err := runScripted(t, t.Context(), func(m map[string]any) []proto.Event {
		id, _ := m["request_id"].(string)
		return []proto.Event{
			&proto.TurnStarted{TurnHeader: head("t1", id, 1)},
			&proto.AssistantDelta{TurnHeader: head("t0", "", 2), Content: "another turn's"},
			&proto.AssistantDelta{TurnHeader: head("t1", "", 3), Content: "hi"},
			&proto.TurnCompleted{TurnHeader: head("t0", "", 4)},
			&proto.TurnCompleted{TurnHeader: head("t1", "", 5)},
		}
	}, client.Turn{Start: proto.TurnStart{Prompt: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := end.(*proto.TurnCompleted); !ok || e.TurnID != "t1" {
		t.Fatalf("end = %#v, want t1's turn.completed", end)
	}
	var types []string
	for _, ev := range seen {
		types = append(types, ev.EventType()+"/"+ev.(proto.TurnEvent).Turn().TurnID)
	}
	if got := strings.Join(types, " "); got != "turn.started/t1 assistant.delta/t1 turn.completed/t1" {
		t.Errorf("On saw %s", got)
	}
}

// A queued turn runs under its queue id.
func TestRunTurnQueued(t *testing.T) {
	end, _, _, err := runScripted(t, t.Context(), func(m map[string]any) []proto.Event {
		id, _ := m["request_id"].(string)
		return []proto.Event{
			&proto.QueueEnqueued{SessionHeader: proto.SessionHeader{Header: proto.Header{RequestID: id}, SessionID: "s1"}, QueueID: "q7"},
			&proto.TurnCompleted{TurnHeader: head("t1", "", 2)}, // the running turn ahead of it
			&proto.TurnStarted{TurnHeader: head("q7", id, 3)},
			&proto.TurnFailed{TurnHeader: head("q7", "", 4), Code: "model_error"},
		}
	}, client.Turn{})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := end.(*proto.TurnFailed); !ok || e.TurnID != "q7" || e.Code != "model_error" {
		t.Fatalf("end = %#v, want q7's turn.failed", end)
	}
}

// An error answering the start ends the turn; so does a fatal error.
func TestRunTurnRefusedOrFatal(t *testing.T) {
	for _, fatal := range []bool{false, true} {
		end, _, _, err := runScripted(t, t.Context(), func(m map[string]any) []proto.Event {
			id, _ := m["request_id"].(string)
			if fatal {
				id = ""
			}
			return []proto.Event{&proto.Error{Header: proto.Header{RequestID: id}, Code: proto.ErrInvalidRequest, Message: "prompt too long", Fatal: fatal}}
		}, client.Turn{})
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := end.(*proto.Error); !ok || e.Code != proto.ErrInvalidRequest {
			t.Fatalf("fatal %v: end = %#v, want the error", fatal, end)
		}
	}
}

// When ctx ends the turn is cancelled by its id, OnCancel runs once, and
// the turn's own end is returned.
func TestRunTurnCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var cancels int
	end, _, s, err := runScripted(t, ctx, func(m map[string]any) []proto.Event {
		id, _ := m["request_id"].(string)
		switch m["type"] {
		case proto.TypeTurnStart:
			return []proto.Event{&proto.TurnStarted{TurnHeader: head("t1", id, 1)}}
		case proto.TypeTurnCancel:
			if m["turn_id"] != "t1" {
				return []proto.Event{&proto.Error{Code: "test", Message: "cancel named " + m["turn_id"].(string), Fatal: true}}
			}
			return []proto.Event{&proto.TurnCancelled{TurnHeader: head("t1", "", 2)}}
		}
		return nil
	}, client.Turn{OnCancel: func() { cancels++ }, On: cancelOnStart(cancel)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := end.(*proto.TurnCancelled); !ok {
		t.Fatalf("end = %#v, want turn.cancelled", end)
	}
	if cancels != 1 || strings.Join(s.got(), ",") != "turn.start,turn.cancel" {
		t.Errorf("OnCancel ran %d times; server got %v", cancels, s.got())
	}
}

// A cancelled turn that never ends is given up after CancelWait; ctx ended
// before the turn started is ErrNotStarted; a connection that ends is an
// error.
func TestRunTurnErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	_, _, _, err := runScripted(t, ctx, func(m map[string]any) []proto.Event {
		if m["type"] == proto.TypeTurnStart {
			return []proto.Event{&proto.TurnStarted{TurnHeader: head("t1", m["request_id"].(string), 1)}}
		}
		return nil // the cancel is never answered
	}, client.Turn{CancelWait: 50 * time.Millisecond, On: cancelOnStart(cancel)})
	if !errors.Is(err, client.ErrCancelTimeout) {
		t.Errorf("unanswered cancel: err = %v, want ErrCancelTimeout", err)
	}

	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	_, _, _, err = runScripted(t, ctx, func(map[string]any) []proto.Event { return nil }, client.Turn{})
	if !errors.Is(err, client.ErrNotStarted) {
		t.Errorf("cancelled before the start was answered: err = %v, want ErrNotStarted", err)
	}

	p := client.ServeInProcess(t.Context(), func(ctx context.Context, r io.Reader, w io.Writer) error {
		return nil // the server ends at once
	})
	defer p.Close()
	if _, err := client.RunTurn(t.Context(), p.Conn, client.Turn{}); err == nil {
		t.Error("a connection that ended gave no error")
	}
}

// cancelOnStart interrupts the client once it has seen its turn start.
func cancelOnStart(cancel context.CancelFunc) func(proto.Event) {
	return func(ev proto.Event) {
		if _, ok := ev.(*proto.TurnStarted); ok {
			cancel()
		}
	}
}
