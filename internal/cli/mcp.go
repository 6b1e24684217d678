package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tool"
)

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "List and test the configured MCP servers"}
	cmd.AddCommand(newMCPListCmd(g), newMCPTestCmd(g))
	return cmd
}

// mcpSetup loads the configuration of a workspace for the mcp and hooks
// commands (workspaceApp).
func (g *globals) mcpSetup(workspace string) (*app.App, *config.Loaded, string, error) {
	return g.workspaceApp(g.consoleLogger(true), false, workspace)
}

func newMCPListCmd(g *globals) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start every enabled MCP server of a workspace and list its state and tools with their risk",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, loaded, ws, err := g.mcpSetup(workspace)
			if err != nil {
				return err
			}
			defer a.Close()
			cfg := &loaded.Config
			if len(cfg.MCP.Servers) == 0 {
				fmt.Fprintf(g.stdio.Out, "no MCP servers configured; add an [mcp.servers.NAME] table to the user config (see docs/mcp.md)\n")
				return nil
			}
			states := map[string]mcp.ServerState{}
			for _, st := range a.ProbeMCP(g.ctx, ws, a.MCPServers(cfg, ws)) {
				states[st.Name] = st
			}
			names := make([]string, 0, len(cfg.MCP.Servers))
			for n := range cfg.MCP.Servers {
				names = append(names, n)
			}
			sort.Strings(names)
			failed := false
			for i, n := range names {
				if i > 0 {
					fmt.Fprintln(g.stdio.Out)
				}
				srv := a.MCPServer(cfg, n, ws)
				if !cfg.MCP.Servers[n].Enabled {
					fmt.Fprintf(g.stdio.Out, "%s  %s  disabled (enabled = false, %s)\n", termtext.Line(n), srv.Transport(), termtext.Line(loaded.Origin("mcp.servers."+n+".enabled")))
					continue
				}
				st := states[n]
				if st.Err != nil {
					failed = true
				}
				printState(g.stdio.Out, st)
			}
			if failed {
				return exitCode(ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	return cmd
}

func newMCPTestCmd(g *globals) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Start one MCP server, list its tools, stop it; print what went wrong",
		Long: "Start the MCP server NAME as a session of the workspace would (even when it is disabled), list its tools\n" +
			"with the name, risk and hints SCV gives them, then stop it. Exit status 1 when it cannot be used.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, loaded, ws, err := g.mcpSetup(workspace)
			if err != nil {
				return err
			}
			defer a.Close()
			cfg := &loaded.Config
			name := args[0]
			c, ok := cfg.MCP.Servers[name]
			if !ok {
				var names []string
				for n := range cfg.MCP.Servers {
					names = append(names, n)
				}
				sort.Strings(names)
				if len(names) == 0 {
					return usageErr("no MCP server %q: none is configured; add [mcp.servers.%s] to the user config (see docs/mcp.md)", name, name)
				}
				return usageErr("no MCP server %q; configured: %s", name, strings.Join(names, ", "))
			}
			srv := a.MCPServer(cfg, name, ws)
			out := g.stdio.Out
			line := termtext.Line
			if srv.URL != "" {
				fmt.Fprintf(out, "server %s: streamable HTTP at %s\n", line(name), line(srv.URL))
			} else {
				fmt.Fprintf(out, "server %s: stdio, %s %s\n  in %s\n", line(name), line(srv.Command), line(strings.Join(srv.Args, " ")), line(srv.Dir))
			}
			if !c.Enabled {
				fmt.Fprintf(out, "note: disabled (enabled = false, %s); testing it anyway\n", line(loaded.Origin("mcp.servers."+name+".enabled")))
			}
			began := time.Now()
			st := a.ProbeMCP(g.ctx, ws, []mcp.Server{srv})[0]
			printState(out, st)
			a.Close()
			fmt.Fprintf(out, "stopped (%s in all)\n", time.Since(began).Round(time.Millisecond))
			if st.Err != nil {
				return &exitError{code: ExitFailure, msg: fmt.Sprintf("MCP server %s cannot be used: %s", termtext.Line(name), termtext.Line(st.Err.Error()))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	return cmd
}

// printState prints one server: its state line, then its tools and the
// tools left out. Every text here may come from the server (its name and
// version, tool names, descriptions, hints, errors, stderr): each is one
// line made visible.
func printState(w io.Writer, st mcp.ServerState) {
	line := termtext.Line
	if st.Err != nil {
		fmt.Fprintf(w, "%s  %s  failed: %s\n", line(st.Name), st.Transport, line(st.Err.Error()))
		if st.Stderr != "" && !strings.Contains(st.Err.Error(), "stderr") {
			fmt.Fprintf(w, "  stderr: %s\n", line(oneLine(st.Stderr, 300)))
		}
		return
	}
	info := ""
	if st.Info != "" {
		info = line(st.Info) + ", "
	}
	fmt.Fprintf(w, "%s  %s  ready: %d tools (%sstarted in %s)\n", line(st.Name), st.Transport, len(st.Tools), info, st.StartTime.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range st.Tools {
		hints := ""
		if t.Hints != "" {
			hints = "  [server says: " + line(t.Hints) + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", line(t.Name), t.Risk, line(oneLine(t.Description, 80)), hints)
	}
	_ = tw.Flush()
	for _, s := range st.Skipped {
		fmt.Fprintf(w, "  skipped: %s\n", line(s))
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = tool.TruncateUTF8(s, n) + "…"
	}
	return s
}
