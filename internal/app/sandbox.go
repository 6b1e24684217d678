package app

import (
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/sandbox"
)

// Sandbox is the sandbox of children of kind (config.SandboxBash, …): the
// [sandbox] table with its paths made absolute, or mode off when the table
// does not apply to kind.
func (a *App) Sandbox(cfg *config.Config, kind string) sandbox.Config {
	sb := cfg.Sandbox
	if !sb.Applies(kind) {
		return sandbox.Config{} // mode "" is off
	}
	writable, deny := sb.Paths(paths.UserHome(a.opts.Env), a.opts.Layout.Home)
	return sandbox.Config{Mode: sandbox.Mode(sb.Mode), Network: sb.Network, WritableRoots: writable, DenyRead: deny,
		BestEffort: sb.BestEffort}
}
