package cli

import (
	"fmt"
	"os"

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
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			g.printVersion()
			return nil
		}
		return runTUI(g)
	}
}

func runTUI(g *globals) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w", err)
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
	})
}
