package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/daemon"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/version"
)

// Daemon is an instance's long-lived server with everything it is made
// of, built in one place: the app that makes sessions, the session
// database, the protocol server over both, the WeChat bridge's supervisor
// (a component beside the server, over the same database), and the status
// and administration the server answers daemon.status, daemon.reload and
// the clawbot requests with. NewDaemon builds it, Run serves the instance
// socket, Close gives back what NewDaemon opened.
type Daemon struct {
	App        *App
	Store      *store.Store
	Server     *server.Server
	Supervisor *clawbot.Supervisor

	cfg     *config.Config
	started time.Time
	// quit is closed by daemon.shutdown (scv stop); Run ends then.
	quit     chan struct{}
	quitOnce sync.Once
}

// NewDaemon builds the daemon of opts.Layout's instance. opts must carry
// the delegation tracker and the containment (the daemon runs every tool).
// The configuration is the user's (no workspace layer): it sets the frame
// and session limits, the [history] retention and the bridge's limits.
func NewDaemon(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Tracker == nil || opts.Contain == nil {
		return nil, errors.New("app: a daemon needs a delegation tracker and a containment")
	}
	a := New(opts)
	loaded, err := a.LoadConfig("", NoOverrides)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Warm(&loaded.Config)
	st, err := OpenStore(ctx, opts.Layout, "daemon", a.opts.Logger)
	if err != nil {
		a.Close()
		return nil, err
	}
	d := &Daemon{App: a, Store: st, cfg: &loaded.Config, started: time.Now(), quit: make(chan struct{})}
	so := a.serverOptions(d.cfg, st, "daemon", d.Status, d.shutdown)
	so.Admin = d.Admin
	jobs := a.newJobs(d.cfg, st, func() *server.Server { return d.Server })
	so.SessionDeleted = jobs.CancelSession
	d.Server = server.New(so)
	d.Supervisor = a.newClawbot(d.Server, st, d.cfg)
	return d, nil
}

// Run serves the instance socket until ctx ends or a client asks the
// daemon to stop, then stops gracefully; daemon.ErrRunning means another
// daemon of the instance holds it.
func (d *Daemon) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-d.quit:
			stop()
		case <-ctx.Done():
		}
	})
	defer watch.Wait()
	defer stop()
	a, logger := d.App, d.App.opts.Logger
	return daemon.Run(ctx, daemon.Options{
		// Under the subreaper mechanism the containment already made the
		// daemon a subreaper and reaps for it.
		Layout: a.opts.Layout, Server: d.Server, Logger: logger, Subreaper: a.Contain().Mechanism() != proc.MechSubreaper,
		Reconcile: func(ctx context.Context) (int, error) { return Reconcile(ctx, a.opts.Tracker, a.Contain(), logger) },
		// The jobs stop first: their reports go to the database, still
		// open.
		Drain: func() { a.jobs.Close(); a.Close() }, Components: []func(context.Context){d.Supervisor.Run},
		Idle: func() bool { return d.Server.Running() == 0 },
		// Retention runs once the lock is ours: one daemon prunes.
		Ready: func() { prune(ctx, d.Store, d.cfg.History, logger) },
	})
}

// Close gives back the daemon's session leases, closes the database and
// stops what the app still runs (Run's drain has stopped it already
// unless Run failed before).
func (d *Daemon) Close() {
	if d.App.jobs != nil {
		d.App.jobs.Close()
	}
	CloseStore(d.Store, d.App.opts.Logger)
	d.App.Close()
}

func (d *Daemon) shutdown() { d.quitOnce.Do(func() { close(d.quit) }) }

// Status is the daemon.status answer: version, pid, uptime, sessions,
// delegations, the database, the provider a new session gets, process
// tracking and the bridge's accounts.
func (d *Daemon) Status() proto.DaemonStatus {
	a, logger := d.App, d.App.opts.Logger
	c := a.opts.Tracker.Counts()
	ds := proto.DaemonStatus{Version: version.Version, PID: os.Getpid(), UptimeSeconds: int64(time.Since(d.started).Seconds()),
		Sessions: a.Sessions(), Delegations: proto.Delegations{Running: c.Running, OrphansReaped: int(c.OrphansReaped)},
		Database: DatabaseStatus(context.Background(), d.Store, logger), Provider: a.daemonProvider(),
		ProcessTracking: a.Contain().Describe()}
	if d.Supervisor != nil {
		ds.Clawbot = clawbot.ProtoStatus(d.Supervisor.Status())
	}
	return ds
}

// Admin answers the daemon's administrative requests (daemon.reload, the
// clawbot settings and logout) through the bridge's supervisor, with the
// status after them.
func (d *Daemon) Admin(ctx context.Context, m proto.Message) (proto.DaemonStatus, error) {
	err := d.Supervisor.Request(ctx, m)
	return d.Status(), err
}

// daemonProvider is the provider a session started without overrides
// uses, with the configuration read now (a file edited since the start
// shows); nil when it does not load.
func (a *App) daemonProvider() *proto.DaemonProvider {
	loaded, err := a.LoadConfig("", NoOverrides)
	if err != nil {
		a.opts.Logger.Warn("status: load the configuration", "err", err)
		return nil
	}
	name, prof := loaded.Config.ActiveProvider()
	p := &proto.DaemonProvider{Profile: name, WireAPI: prof.WireAPI, Model: prof.Model, BaseURL: prof.BaseURL,
		KeyEnv: prof.APIKeyEnv, ConfigFiles: []string{}}
	if prof.APIKey != "" {
		p.KeyEnv = ""
	}
	_, kerr := loaded.Config.APIKey(a.opts.Env)
	p.KeySet = kerr == nil
	for _, f := range loaded.Files {
		p.ConfigFiles = append(p.ConfigFiles, f.Path)
	}
	return p
}

// newClawbot builds the WeChat bridge's supervisor over the daemon's own
// store (its delivery state lives beside the sessions it answers in).
func (a *App) newClawbot(srv *server.Server, st *store.Store, cfg *config.Config) *clawbot.Supervisor {
	ws, err := os.Getwd()
	if err != nil {
		ws = "/"
	}
	return clawbot.NewSupervisor(clawbot.Options{
		Layout: a.opts.Layout, Logger: a.opts.Logger, Workspace: ws, Store: st,
		Daemon:         clawbot.ProtocolDaemon{Serve: srv.Serve, Version: version.Version},
		MaxToolTimeout: time.Duration(cfg.Tools.MaxTimeoutSeconds) * time.Second,
		Secrets:        cfg.SecretValues(a.opts.Env), UserHome: paths.UserHome(a.opts.Env),
		Tuning: clawbot.Tuning{MaxQueue: cfg.Clawbot.MaxQueuePerSender, MaxOpen: cfg.Clawbot.MaxConversations,
			MaxQueuedBytes: cfg.Clawbot.MaxQueuedBytes},
	})
}

// Reconcile stops what SCV processes that died left running: the records
// of their delegations and calls, and their cgroup leaves. The count is of
// delegations, as `scv status` reports.
func Reconcile(ctx context.Context, tr *delegation.Tracker, c *proc.Containment, logger *slog.Logger) (int, error) {
	n, err := tr.Reconcile(ctx)
	leaves, cerr := c.Reconcile()
	if leaves > 0 {
		logger.Info("stopped the processes left in the cgroups of SCV processes that died", "cgroups", leaves)
	}
	return n, errors.Join(err, cerr)
}
