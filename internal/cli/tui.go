package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tui"
	"github.com/scv-agent/scv/internal/version"
)

// newTUICmd is `scv tui`: the terminal UI attached to the daemon socket.
func newTUICmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "tui",
		Short: "Terminal UI attached to the running daemon (same as plain `scv`)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTUI(g) },
	}
}

// attachTUIRoot makes plain `scv` run the TUI, and `scv --version` print
// what `scv version` prints.
func attachTUIRoot(root *cobra.Command, g *globals) {
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and build info, as the version command does")
	root.Flags().BoolVarP(&g.tuiContinue, "continue", "c", false, "resume the last session of this workspace")
	root.Flags().BoolVarP(&g.tuiResume, "resume", "r", false, "resume session ID (scv --resume ID), or pick one from a list when no ID is given")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 && !(g.tuiResume && len(args) == 1) {
			return usageErr("%s", unknownCommand(cmd, args))
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if showVersion {
			g.printVersion()
			return nil
		}
		if g.tuiContinue && g.tuiResume {
			return usageErr("--continue and --resume name the session two ways; pass one")
		}
		if len(args) == 1 {
			g.tuiResumeID = args[0]
		}
		return runTUI(g)
	}
}

// unknownCommand explains an argument of plain `scv` that names no
// command: a near miss gets the command it is close to, anything else
// (most often a prompt) the exec command that runs it.
func unknownCommand(root *cobra.Command, args []string) string {
	msg := fmt.Sprintf("unknown command %q for \"scv\"", args[0])
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		return msg + "; did you mean " + orList(s) + "? (scv --help lists the commands)"
	}
	return msg + fmt.Sprintf("; to run a prompt use: scv exec %q (scv --help lists the commands)", strings.Join(args, " "))
}

func runTUI(g *globals) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	cwd, err := workspaceDir("")
	if err != nil {
		return err
	}
	o := g.sessionOverrides(cwd)
	return tui.Run(g.ctx, tui.Options{
		Socket:   layout.Socket(),
		Cwd:      cwd,
		Model:    o.Model,
		Provider: o.Provider,
		BaseURL:  o.BaseURL,
		// The key travels only over the daemon's socket (mode 0600).
		ProviderKeyEnv: o.ProviderKeyEnv,
		ProviderKey:    o.ProviderKey,
		// The TUI draws the screen itself and makes every text visible as
		// it arrives (internal/tui/visible.go).
		In:       g.stdio.In,
		Out:      g.raw.Out,
		Version:  version.Version,
		Continue: g.tuiContinue,
		Resume:   g.tuiResumeID,
		Pick:     g.tuiResume && g.tuiResumeID == "",
	})
}

// sessionOverrides are the client's settings a session started through
// the daemon must use, whatever environment the daemon was started in:
// the flags, else the SCV_PROVIDER, SCV_MODEL and SCV_BASE_URL variables,
// and the provider key from the variable the client's profile names
// (the daemon uses it only when its own environment lacks it).
func (g *globals) sessionOverrides(cwd string) proto.SessionStart {
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return g.env[env]
	}
	o := proto.SessionStart{Provider: pick(g.provider, "SCV_PROVIDER"), Model: pick(g.model, "SCV_MODEL"), BaseURL: pick(g.baseURL, "SCV_BASE_URL")}
	// A configuration that does not load sends no key; the daemon then
	// reports what is wrong when the session starts.
	if loaded, _, err := g.loadConfig(cwd); err == nil {
		if _, prof := loaded.Config.ActiveProvider(); prof.APIKey == "" && prof.APIKeyEnv != "" && g.env[prof.APIKeyEnv] != "" {
			o.ProviderKeyEnv, o.ProviderKey = prof.APIKeyEnv, g.env[prof.APIKeyEnv]
		}
	}
	return o
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
