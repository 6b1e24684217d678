package server

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// Background jobs of delegated agents run beside the sessions, owned by
// the process, not by a connection (internal/delegation/jobs). When one
// ends, Report is the door it comes in by: an open session gets the
// report in its turn loop, between turns (a system-authored message in
// its history, a job.reported event, and with agent.report_turns = "auto"
// a turn when nothing else waits); a session no client has open gets the
// message in its stored history, which the model reads when the session
// is resumed.

// JobReport is a background job's end, for its session.
type JobReport struct {
	Session, Job, Agent, Status string
	// Text is the system-authored message for the history.
	Text   string
	Reason string
	// Wanted, when set, says whether the report is still news (false once
	// the model read the job's end itself).
	Wanted func() bool
}

// reportActive is the session's active "turn" while a report is
// delivered, so undo, clear and compaction wait (the report changes the
// history): no turn id has this form.
const reportActive = "report"

func (r *JobReport) wanted() bool { return r.Wanted == nil || r.Wanted() }

// Report delivers a job's report to its session. It does not wait for
// the session's turn to end.
func (srv *Server) Report(r JobReport) {
	srv.liveMu.Lock()
	s := srv.open[r.Session]
	srv.liveMu.Unlock()
	if s != nil && s.enqueueReport(&r) {
		return
	}
	srv.storeReport(&r)
}

// opened and closed keep the registry of the sessions open on any
// connection of this server, which Report looks in.
func (srv *Server) opened(s *session) {
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	if srv.open == nil {
		srv.open = map[string]*session{}
	}
	srv.open[s.id] = s
}

func (srv *Server) closed(s *session) {
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	if srv.open[s.id] == s {
		delete(srv.open, s.id)
	}
}

// enqueueReport queues r for the turn loop; false when the session is
// closing (the caller stores it instead). Reports are not bounded by
// session.max_queued_turns: agent.max_background bounds them.
func (s *session) enqueueReport(r *JobReport) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.queue = append(s.queue, pending{report: r})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// storeReport appends r's message to the stored history of a session no
// client has open; without a store, or for a deleted session, the report
// is only logged.
func (srv *Server) storeReport(r *JobReport) {
	log := srv.opts.Logger.With("session", r.Session, "job", r.Job, "status", r.Status)
	st := srv.opts.Store
	if st == nil || !r.wanted() {
		log.Info("background job ended", "reported", false)
		return
	}
	raw, err := agent.NoteMessage(r.Text)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err = st.UpdateHistory(ctx, r.Session, store.HistoryUpdate{Append: []json.RawMessage{raw}})
		cancel()
	}
	if err != nil {
		log.Warn("cannot store the report of a background job", "err", err)
		return
	}
	log.Info("background job reported to a closed session")
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	if srv.missed == nil {
		srv.missed = map[string][]*JobReport{}
	}
	if m := srv.missed[r.Session]; len(m) < maxMissedReports {
		srv.missed[r.Session] = append(m, r)
	}
}

// maxMissedReports bounds the reports a closed session keeps for its next
// client.
const maxMissedReports = 16

// sendMissed tells the client that just opened s of the reports the
// session's stored history gained while no client had it open (this
// process's only: they are not stored as events).
func (c *conn) sendMissed(s *session) {
	srv := c.srv
	srv.liveMu.Lock()
	missed := srv.missed[s.id]
	delete(srv.missed, s.id)
	srv.liveMu.Unlock()
	for _, r := range missed {
		c.sendSession(s, &proto.JobReported{Job: r.Job, Agent: r.Agent, Status: r.Status, Text: r.Text, Reason: r.Reason})
	}
}

// forgetMissed drops the kept reports of a deleted session.
func (srv *Server) forgetMissed(id string) {
	srv.liveMu.Lock()
	defer srv.liveMu.Unlock()
	delete(srv.missed, id)
}

// deliverReport runs in the session's turn loop with no turn running: the
// report becomes a turn of its own (agent.report_turns = "auto", nothing
// else queued) or a message the next turn's model reads; either way the
// client sees job.reported first.
func (c *conn) deliverReport(s *session, r *JobReport) {
	defer func() {
		s.mu.Lock()
		s.active = ""
		s.mu.Unlock()
	}()
	if !r.wanted() {
		return
	}
	ev := &proto.JobReported{Job: r.Job, Agent: r.Agent, Status: r.Status, Text: r.Text, Reason: r.Reason}
	s.mu.Lock()
	auto := s.info.ReportTurns && len(s.queue) == 0 && !s.closing
	if auto {
		s.queue = append(s.queue, pending{turnID: "t_" + uuid.NewString()[:12], prompt: r.Text})
	}
	s.mu.Unlock()
	if auto {
		ev.Turn = true
		c.sendSession(s, ev)
		return
	}
	mark := s.agent.Mark()
	raw, err := s.agent.Note(r.Text)
	if st := c.srv.opts.Store; err == nil && st != nil && !s.unstored() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
		err = st.UpdateHistory(ctx, s.id, store.HistoryUpdate{Append: []json.RawMessage{raw}})
		cancel()
	}
	if err != nil {
		s.agent.Rewind(mark)
		c.srv.opts.Logger.Warn("cannot add the report of a background job to the history", "session", s.id, "job", r.Job, "err", err)
	}
	c.sendSession(s, ev)
}
