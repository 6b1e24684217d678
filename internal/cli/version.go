package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/version"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build info",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.printVersion()
			return nil
		},
	}
}

// printVersion is the output of `scv version` and `scv --version`.
func (g *globals) printVersion() {
	fmt.Fprintf(g.stdio.Out, "scv %s (commit %s, %s, %s/%s)\n", version.Version, version.Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
