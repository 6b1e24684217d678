package app

import (
	"context"
	"errors"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
)

// newJobs is the daemon's table of background jobs: it belongs to the
// process, so a client that quits leaves its jobs running; their reports
// come into srv's sessions by srv.Report, and a deleted session's jobs
// stop with it.
// A session deleted from st by another process (`scv sessions rm`, a
// prune) is noticed within a second.
func (a *App) newJobs(cfg *config.Config, st *store.Store, srv func() *server.Server) *jobs.Table {
	t := jobs.New(jobs.Options{MaxPerSession: cfg.Agent.MaxBackground, Logger: a.opts.Logger, Report: func(r jobs.Report) {
		srv().Report(server.JobReport{Session: r.Session, Job: r.Job, Agent: r.Agent, Status: r.Status, Text: r.Text, Reason: r.Reason, Wanted: r.Wanted})
	}, Gone: func(ctx context.Context, session string) bool {
		_, err := st.Session(ctx, session)
		return errors.Is(err, store.ErrNotFound)
	}})
	a.jobs = t
	return t
}
