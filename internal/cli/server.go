package cli

import (
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
)

func newServerCmd(g *globals) *cobra.Command {
	var stdio bool
	cmd := &cobra.Command{
		Use:   "server --stdio",
		Short: "Serve the client protocol on stdin/stdout (one client; EOF ends it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !stdio {
				return usageErr("scv server needs --stdio (the daemon is `scv run`)")
			}
			logger := g.stderrLogger()
			a, layout, tr, err := g.newApp(logger, true)
			if err != nil {
				return err
			}
			defer a.Close()
			loaded, err := a.LoadConfig("", app.NoOverrides)
			if err != nil {
				return err
			}
			reconcileAtStart(g.ctx, tr, a.Contain(), logger)
			srv, stop, err := openServer(g.ctx, a, layout, &loaded.Config, "scv server --stdio", logger)
			if err != nil {
				return err
			}
			defer stop()
			// stdout carries the protocol, JSON the client decodes.
			return srv.Serve(g.ctx, g.stdio.In, g.raw.Out)
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve on stdin/stdout")
	return cmd
}
