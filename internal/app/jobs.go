package app

import (
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/server"
)

// newJobs is the daemon's table of background jobs: it belongs to the
// process, so a client that quits leaves its jobs running; their reports
// come into srv's sessions by srv.Report, and a deleted session's jobs
// stop with it.
func (a *App) newJobs(cfg *config.Config, srv func() *server.Server) *jobs.Table {
	t := jobs.New(jobs.Options{MaxPerSession: cfg.Agent.MaxBackground, Logger: a.opts.Logger, Report: func(r jobs.Report) {
		srv().Report(server.JobReport{Session: r.Session, Job: r.Job, Agent: r.Agent, Status: r.Status, Text: r.Text, Reason: r.Reason, Wanted: r.Wanted})
	}})
	a.jobs = t
	return t
}
