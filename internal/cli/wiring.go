package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
)

// newApp builds the composition root for this process. withTracker enables
// delegation records (and so the agent tools).
func (g *globals) newApp(logger *slog.Logger, withTracker bool) (*app.App, paths.Layout, *delegation.Tracker, error) {
	return g.newAppWith(logger, withTracker, nil)
}

// newAppWith is newApp with a last change to the app's options.
func (g *globals) newAppWith(logger *slog.Logger, withTracker bool, adjust func(*app.Options)) (*app.App, paths.Layout, *delegation.Tracker, error) {
	opts, layout, err := g.appOptions(logger, withTracker)
	if err != nil {
		return nil, layout, nil, err
	}
	if adjust != nil {
		adjust(&opts)
	}
	return app.New(opts), layout, opts.Tracker, nil
}

// appOptions are the app's options from the global flags and the
// environment. withTracker adds the delegation records and the
// containment of the processes tools start.
func (g *globals) appOptions(logger *slog.Logger, withTracker bool) (app.Options, paths.Layout, error) {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return app.Options{}, layout, err
	}
	if err := g.checkPolicyFlag(); err != nil {
		return app.Options{}, layout, err
	}
	var tr *delegation.Tracker
	var contain *proc.Containment
	if withTracker {
		tr, err = delegation.New(delegation.Options{Dir: layout.Delegations(), CallDir: layout.Calls(), Logger: logger})
		if err != nil {
			return app.Options{}, layout, err
		}
		if contain, err = g.containment(logger, layout.Home); err != nil {
			return app.Options{}, layout, err
		}
	}
	return app.Options{
		Layout: layout, Env: g.env, ExtraConfig: g.configPath, Logger: logger, Tracker: tr, Contain: contain,
		InstanceID: fmt.Sprintf("scv-%d", os.Getpid()),
		Flags:      config.Overrides{Model: g.model, Provider: g.provider, BaseURL: g.baseURL, ApprovalPolicy: g.approvalPolicy},
	}, layout, nil
}

// EnvProcessTracking chooses how a process that runs tools tracks their
// processes: auto (the default), cgroup, subreaper or group+tag.
const EnvProcessTracking = "SCV_PROCESS_TRACKING"

// containment sets up the tracking of the processes this process's tools
// start (SCV_PROCESS_TRACKING, auto by default): a cgroup v2 leaf per call
// where one can be made, else this process becomes a child subreaper.
func (g *globals) containment(logger *slog.Logger, home string) (*proc.Containment, error) {
	want, err := proc.ParseMechanism(g.env[EnvProcessTracking])
	if err != nil {
		return nil, usageErr("%s: %v", EnvProcessTracking, err)
	}
	c, err := proc.NewContainment(proc.ContainOptions{Want: want, Instance: home, Logger: logger})
	if err != nil {
		return nil, usageErr("%s=%s: %v", EnvProcessTracking, want, err)
	}
	logger.Debug("process tracking", "mechanism", c.Describe())
	return c, nil
}

// reconcileAtStart stops what dead owners left behind — delegated agents
// of dead SCV processes and the processes left in their cgroup leaves —
// and logs what it did; every process that serves sessions (exec, the
// stdio server, acp, the TUI without a daemon) calls it before its first
// session, as the daemon does.
func reconcileAtStart(ctx context.Context, tr *delegation.Tracker, c *proc.Containment, logger *slog.Logger) {
	if n, err := app.Reconcile(ctx, tr, c, logger); err != nil {
		logger.Warn("reconcile delegations", "err", err)
	} else if n > 0 {
		logger.Info("stopped orphaned delegations", "count", n)
	}
}

// refuseDelegated keeps a delegated scv (SCV_DELEGATION_DEPTH > 0) from
// managing the daemon that supervises it (docs/runtime.md, "Processes and
// commands").
func (g *globals) refuseDelegated(what string) error {
	if d := delegation.Depth(g.env); d > 0 {
		return usageErr("%s is refused inside a delegated agent run (SCV_DELEGATION_DEPTH=%d); ask the user to run it", what, d)
	}
	return nil
}

// stderrLogger logs warnings and errors to stderr as structured records,
// for the processes that serve (`scv server --stdio`, the daemon); the
// commands a person runs log through consoleLogger's sentences. It never
// writes stdout, which may carry the protocol.
func (g *globals) stderrLogger() *slog.Logger {
	level := slog.LevelWarn
	if g.env["SCV_LOG"] == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(g.stdio.Err, &slog.HandlerOptions{Level: level}))
}
