package server

import (
	"context"
	"sync"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/proto"
)

// pending is a prompt waiting for its turn.
type pending struct {
	turnID, requestID, prompt string
}

// session is one protocol session: an agent session plus its prompt queue.
// One goroutine (run) executes turns in order.
type session struct {
	id    string
	agent *agent.Session
	info  SessionInfo
	seq   uint64 // guarded by conn.sendMu

	mu       sync.Mutex
	queue    []pending
	active   string // turn id running now
	cancel   context.CancelFunc
	wake     chan struct{}
	closing  bool
	done     chan struct{}
	released bool
}

func newSession(id string, ag *agent.Session, info SessionInfo) *session {
	return &session{id: id, agent: ag, info: info, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// enqueue adds a prompt; it reports whether it had to wait behind another
// turn (so the client is told queue.enqueued), and refuses it (ok false)
// when MaxQueuedTurns prompts already wait.
func (s *session) enqueue(p pending) (queued, ok bool) {
	s.mu.Lock()
	queued = s.active != "" || len(s.queue) > 0
	// The queue holds the prompts not yet started; while no turn runs
	// the head of the queue is about to start and does not count.
	waiting := len(s.queue)
	if s.active == "" && waiting > 0 {
		waiting--
	}
	if queued && waiting >= max(s.info.MaxQueuedTurns, 0) {
		s.mu.Unlock()
		return false, false
	}
	s.queue = append(s.queue, p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return queued, true
}

// run executes queued turns in order until shutdown.
func (s *session) run(c *conn) {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-c.ctx.Done():
				s.mu.Lock()
				s.closing = true
				s.mu.Unlock()
			}
			s.mu.Lock()
		}
		if s.closing {
			s.mu.Unlock()
			return
		}
		p := s.queue[0]
		s.queue = s.queue[1:]
		ctx, cancel := context.WithCancel(c.ctx)
		s.active, s.cancel = p.turnID, cancel
		s.mu.Unlock()

		first := true
		s.agent.RunTurn(ctx, p.turnID, p.prompt, func(ev proto.TurnEvent) {
			if first {
				ev.Head().RequestID = p.requestID
				first = false
			}
			if terminal(ev) {
				// The session is idle from the client's point of view as
				// soon as it sees the turn's end (session.clear may follow).
				s.mu.Lock()
				s.active, s.cancel = "", nil
				s.mu.Unlock()
			}
			c.sendSession(s, ev)
		})
		cancel()
		s.mu.Lock()
		s.active, s.cancel = "", nil
		s.mu.Unlock()
	}
}

type cancelOutcome int

const (
	cancelNone cancelOutcome = iota
	cancelActive
	cancelQueued
)

func (s *session) cancelTurn(turnID string) cancelOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	if turnID != "" && turnID == s.active && s.cancel != nil {
		s.cancel()
		return cancelActive
	}
	for i, p := range s.queue {
		if p.turnID == turnID {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return cancelQueued
		}
	}
	return cancelNone
}

// clear empties the history when the session is idle.
func (s *session) clear() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != "" || len(s.queue) > 0 {
		return false
	}
	s.agent.Clear()
	return true
}

// shutdown cancels the active turn, drops the queue and stops run.
func (s *session) shutdown() {
	s.mu.Lock()
	s.closing = true
	s.queue = nil
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// release runs the session's Close once, after run ended.
func (s *session) release(srv *Server) {
	s.mu.Lock()
	already := s.released
	s.released = true
	s.mu.Unlock()
	if already {
		return
	}
	if s.info.Close != nil {
		s.info.Close()
	}
	srv.sessions.Add(-1)
	if srv.opts.OnSessions != nil {
		srv.opts.OnSessions(-1)
	}
}

// terminal says ev ends its turn.
func terminal(ev proto.Event) bool {
	switch ev.(type) {
	case *proto.TurnCompleted, *proto.TurnCancelled, *proto.TurnFailed:
		return true
	}
	return false
}
