package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/tool"
)

var noOverrides = config.Overrides{}

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "List and call the tools directly (built-in and MCP)"}
	cmd.AddCommand(newToolsListCmd(g), newToolsCallCmd(g))
	return cmd
}

// toolset loads the config for a workspace and builds its tools; the
// registry includes the tools of the configured MCP servers, which are
// started for it. Call the returned function when done (it stops them).
func (g *globals) toolset(workspace string) (*config.Config, string, *tool.Registry, func(), error) {
	a, _, _, err := g.newApp(g.stderrLogger(), true)
	if err != nil {
		return nil, "", nil, nil, err
	}
	ws, err := workspaceDir(workspace)
	if err != nil {
		return nil, "", nil, nil, err
	}
	if ws, err = server.CanonicalDir(ws); err != nil {
		return nil, "", nil, nil, usageErr("workspace %v", err)
	}
	loaded, err := a.LoadConfig(ws, noOverrides)
	if err != nil {
		return nil, "", nil, nil, err
	}
	ts, err := a.Tools(&loaded.Config, ws, a.Depth(), false)
	if err != nil {
		return nil, "", nil, nil, err
	}
	done := func() {
		ts.Release()
		a.Close()
	}
	return &loaded.Config, ws, ts.Current(g.ctx), done, nil
}

func newToolsListCmd(g *globals) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools of a workspace: name, risk class, description",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, _, reg, done, err := g.toolset(workspace)
			if err != nil {
				return err
			}
			defer done()
			tw := tabwriter.NewWriter(g.stdio.Out, 0, 4, 2, ' ', 0)
			for _, t := range reg.Tools() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name(), tool.RiskClassOf(t), firstLine(t.Description()))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	return cmd
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// callOutput is the exact form of runtime.md §12.
type callOutput struct {
	Name      string          `json:"name"`
	Success   bool            `json:"success"`
	Error     string          `json:"error,omitempty"`
	Output    json.RawMessage `json:"output"`
	Truncated bool            `json:"truncated"`
}

func newToolsCallCmd(g *globals) *cobra.Command {
	var workspace string
	var yes bool
	cmd := &cobra.Command{
		Use:   "call NAME 'JSON'|-",
		Short: "Validate, approve and run one tool call; print its result as JSON",
		Long: "Validate, approve and run one tool call and print {name, success, error?, output, truncated}.\n" +
			"A call that needs approval is denied unless --yes is given; --yes never overrides --approval-policy deny-on-risk.\n" +
			"JSON '-' reads the arguments from stdin. Exit status: 0 success, 1 failed result, 2 bad usage.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := args[1]
			if raw == "-" {
				b, err := io.ReadAll(io.LimitReader(g.stdio.In, 64<<20))
				if err != nil {
					return usageErr("read arguments from stdin: %v", err)
				}
				raw = string(b)
			}
			if !json.Valid([]byte(raw)) {
				return usageErr("arguments are not valid JSON: %s", clip(raw, 80))
			}
			cfg, ws, reg, done, err := g.toolset(workspace)
			if err != nil {
				return err
			}
			defer done()
			if _, ok := reg.Get(args[0]); !ok {
				if strings.HasPrefix(args[0], mcp.Prefix) {
					return usageErr("unknown tool %q; `scv tools list` shows the tools, `scv mcp list` the MCP servers and why one is not usable", args[0])
				}
				return usageErr("unknown tool %q; `scv tools list` shows the tools", args[0])
			}
			policy, err := approval.Parse(cfg.Tools.ApprovalPolicy)
			if err != nil {
				return err
			}
			res := callTool(g, reg, cfg, ws, policy, yes, args[0], raw)
			out := callOutput{Name: args[0], Success: res.Success, Error: string(res.Error), Truncated: res.Truncated, Output: outputValue(res)}
			if !res.Success && out.Error == "" {
				out.Error = string(tool.Failed)
			}
			enc := json.NewEncoder(g.stdio.Out)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(out); err != nil {
				return err
			}
			if !res.Success {
				return exitCode(ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve the call if the policy asks for approval")
	return cmd
}

func callTool(g *globals, reg *tool.Registry, cfg *config.Config, ws string, policy approval.Policy, yes bool, name, raw string) tool.Result {
	env := tool.Env{Workspace: ws, SessionID: "cli", CallID: "call_1", OutputLimit: cfg.Tools.OutputLimitBytes,
		Progress: func(text string) {}}
	plan, res, ok := reg.Prepare(env, name, json.RawMessage(raw))
	if !ok {
		return res
	}
	switch approval.Decide(policy, plan.Risk) {
	case approval.Deny:
		return tool.Fail(tool.Denied, "denied: approval policy %q does not allow %s risk", policy, plan.Risk)
	case approval.Ask:
		if !yes {
			fmt.Fprintf(g.stdio.Err, "scv: %s needs approval (risk %s): %s\nscv: denied; pass --yes to approve\n", name, plan.Risk, plan.Summary)
			return tool.Fail(tool.Denied, "denied: %s has %s risk and needs approval; rerun with --yes to approve", name, plan.Risk)
		}
	}
	return plan.Run(g.ctx)
}

// outputValue is the tool output as a JSON value when it is JSON, else a
// JSON string.
func outputValue(res tool.Result) json.RawMessage {
	if res.JSON && json.Valid([]byte(res.Output)) {
		return json.RawMessage(res.Output)
	}
	b, _ := json.Marshal(res.Output)
	return b
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
