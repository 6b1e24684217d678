package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/termtext"
)

// newModelsCmd is `scv models`: the models the configured endpoint serves,
// what an error naming a missing model points at (the TUI's /model lists
// the same for a session).
func newModelsCmd(g *globals) *cobra.Command {
	var workspace string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "models [--json]",
		Short: "List the models the active provider's endpoint serves (one GET /models)",
		Long: "Ask the active provider profile's endpoint which models it serves, with the key from this environment,\n" +
			"and print one id a line; the configured model is marked \"*\". --provider and --base-url choose another endpoint.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := canonicalWorkspace(workspace)
			if err != nil {
				return err
			}
			a, _, _, err := g.newApp(g.consoleLogger(true), false)
			if err != nil {
				return err
			}
			defer a.Close()
			loaded, err := a.LoadConfig(ws, app.NoOverrides)
			if err != nil {
				return err
			}
			ms, err := a.ListModels(g.ctx, &loaded.Config)
			if err != nil {
				return fmt.Errorf("provider %s at %s: %w", ms.Provider, ms.BaseURL, err)
			}
			if jsonOut {
				printJSON(g.stdio.Out, ms)
				return nil
			}
			listed := false
			for _, id := range ms.Models {
				mark := " "
				if id == ms.Current {
					mark, listed = "*", true
				}
				fmt.Fprintf(g.stdio.Out, "%s %s\n", mark, termtext.Line(id))
			}
			if len(ms.Models) == 0 {
				fmt.Fprintf(g.stdio.Err, "scv: %s lists no models\n", termtext.Line(ms.BaseURL))
			} else if ms.Current != "" && !listed {
				fmt.Fprintf(g.stdio.Err, "scv: the configured model %q is not among them: set providers.%s.model, or pass --model\n", ms.Current, ms.Provider)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace whose project config applies (default: current directory)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print {provider, wire_api, base_url, current, models} as JSON")
	return cmd
}
