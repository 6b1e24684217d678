package server

import (
	"context"
	"errors"
	"sync"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// pending is a prompt waiting for its turn, or a compaction (session.compact,
// with prompt its focus) waiting for the session to be idle.
type pending struct {
	turnID, requestID, prompt string
	// images are the prompt's input images, read when it was submitted.
	images  []model.Image
	compact bool
	// report is a background job's report (jobs.go), delivered between
	// turns.
	report *JobReport
}

// session is one protocol session: an agent session plus its prompt queue.
// One goroutine (run) executes turns in order.
type session struct {
	id    string
	agent *agent.Session
	info  SessionInfo
	// sendMu orders the session's events: seq assignment, recording in the
	// store and hand-over to the connection's write queue.
	sendMu sync.Mutex
	seq    uint64 // guarded by sendMu
	// create is what the store is to record of a started session with its
	// first turn; nil once recorded (and for resumed sessions). Guarded by
	// mu.
	create *store.NewSession

	mu       sync.Mutex
	queue    []pending
	active   string // turn id running now
	cancel   context.CancelFunc
	wake     chan struct{}
	closing  bool
	done     chan struct{}
	released bool
	// reports are the job reports still queued when the session shut
	// down: release stores them.
	reports []*JobReport
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
	// The session_start hooks, after session.started (or .resumed) was
	// sent and before the first turn.
	s.agent.SessionStartHooks(c.ctx, func(ev proto.TurnEvent) { c.sendTurnEvent(s, nil, ev, nil) })
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
		if p.report != nil {
			s.active = reportActive // deliverReport clears it
			s.mu.Unlock()
			c.deliverReport(s, p.report)
			continue
		}
		ctx, cancel := context.WithCancel(c.ctx)
		s.active, s.cancel = p.turnID, cancel
		s.mu.Unlock()
		c.srv.running.Add(1)

		if p.compact {
			answer := c.compact(ctx, s, p)
			cancel()
			s.mu.Lock()
			s.active, s.cancel = "", nil
			s.mu.Unlock()
			c.srv.running.Add(-1)
			answer()
			continue
		}
		// The mentions are expanded before the turn is recorded, so the
		// store keeps a mentioned image with the turn's own images.
		att := s.agent.Attach(ctx, p.prompt, p.images)
		p.images = att.Images
		rec, err := c.beginRecord(ctx, s, p)
		if err != nil {
			c.refuseTurn(s, p, err)
			cancel()
			c.srv.running.Add(-1)
			continue
		}
		first := true
		s.agent.RunTurnAttached(ctx, p.turnID, p.prompt, att, func(ev proto.TurnEvent) {
			if first {
				ev.Head().RequestID = p.requestID
				first = false
			}
			c.sendTurnEvent(s, rec, ev, nil)
		}, rec.ended(c, s))
		cancel()
		s.mu.Lock()
		s.active, s.cancel = "", nil
		s.mu.Unlock()
		c.srv.running.Add(-1)
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

// unstored says the session is not in the store yet.
func (s *session) unstored() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.create != nil
}

// errBusy is clear's answer while a turn runs or waits.
var errBusy = errors.New("a turn is active or queued")

// clear empties the history when the session is idle; save, when set,
// records the change first and a failure leaves the history as it was.
func (s *session) clear(save func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != "" || len(s.queue) > 0 {
		return errBusy
	}
	if save != nil {
		if err := save(); err != nil {
			return err
		}
	}
	s.agent.Clear()
	return nil
}

// shutdown cancels the active turn, drops the queue and stops run.
func (s *session) shutdown() {
	s.mu.Lock()
	s.closing = true
	for _, p := range s.queue {
		if p.report != nil {
			s.reports = append(s.reports, p.report)
		}
	}
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
	srv.closed(s)
	s.mu.Lock()
	reports := s.reports
	s.reports = nil
	s.mu.Unlock()
	for _, r := range reports {
		srv.storeReport(r)
	}
	if s.info.Close != nil {
		s.info.Close()
	}
	srv.closeStored(s.id)
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
