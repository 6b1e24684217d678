package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/paths"
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
			return fmt.Errorf("unknown command %q for \"scv\"", args[0])
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

func runTUI(g *globals) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	cwd, err := workspaceDir("")
	if err != nil {
		return err
	}
	return tui.Run(g.ctx, tui.Options{
		Socket:   layout.Socket(),
		Cwd:      cwd,
		Model:    g.model,
		Provider: g.provider,
		BaseURL:  g.baseURL,
		In:       g.stdio.In,
		Out:      g.stdio.Out,
		Version:  version.Version,
		Continue: g.tuiContinue,
		Resume:   g.tuiResumeID,
		Pick:     g.tuiResume && g.tuiResumeID == "",
	})
}
