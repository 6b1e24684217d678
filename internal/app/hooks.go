package app

import (
	"context"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/hooks"
)

// Hooks is the hook runner of a session in workspace (nil without hooks):
// the configured hooks, run with the same scrubbed environment and the
// same process containment as the bash tool's.
func (a *App) Hooks(cfg *config.Config, workspace, sessionID string) *hooks.Runner {
	if len(cfg.Hooks.Run) == 0 {
		return nil
	}
	return hooks.New(hooks.Options{Hooks: HookList(cfg), Env: a.HookEnv(cfg), Workspace: workspace, SessionID: sessionID,
		Contain: a.opts.Contain, Logger: a.opts.Logger})
}

// HookEnv is the environment hooks run with: the bash tool's.
func (a *App) HookEnv(cfg *config.Config) []string { return without(a.environ(), cfg.BashEnvRemoved()) }

// HookList is the configured hooks as the hooks package takes them.
func HookList(cfg *config.Config) []hooks.Hook {
	hs := cfg.Hooks.Run
	out := make([]hooks.Hook, len(hs))
	for i, h := range hs {
		timeout := time.Duration(h.TimeoutSeconds) * time.Second
		if timeout == 0 {
			timeout = hooks.DefaultTimeout
		}
		out[i] = hooks.Hook{Name: config.HookName(hs, i), Event: h.Event, Match: h.Match, Command: append([]string(nil), h.Command...),
			Timeout: timeout, OnError: h.OnError, Source: h.Source}
	}
	return out
}

// sessionHooks runs the session_start or session_end hooks. No turn runs
// then, so their runs go to the log, not to a client.
func (a *App) sessionHooks(ctx context.Context, r *hooks.Runner, event string) {
	if !r.Has(event, "") {
		return
	}
	r.Run(context.WithoutCancel(ctx), hooks.Input{Event: event}, func(ran hooks.Ran) {
		a.opts.Logger.Info("hook ran", "hook", ran.Hook, "event", ran.Event, "outcome", ran.Outcome,
			"duration_ms", ran.Duration.Milliseconds(), "reason", ran.Reason, "stderr", ran.Stderr)
	})
}

// noteWorkspaceHooks says at load that a workspace's hooks are in use
// (the user config allowed them): they run commands the repository chose.
func (a *App) noteWorkspaceHooks(l *config.Loaded) {
	for _, f := range l.Files {
		if f.Layer != config.LayerProject {
			continue
		}
		var names []string
		for i, h := range l.Config.Hooks.Run {
			if h.Source == f.Path {
				names = append(names, config.HookName(l.Config.Hooks.Run, i))
			}
		}
		if len(names) > 0 {
			a.opts.Logger.Warn("hooks of the workspace config run commands (hooks.allow_workspace = true)", "file", f.Path, "hooks", strings.Join(names, ", "))
		}
	}
}
