package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/toolcall"
)

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "List and call the tools directly (built-in and MCP)"}
	cmd.AddCommand(newToolsListCmd(g), newToolsCallCmd(g))
	return cmd
}

// toolset loads the config for a workspace and builds its tools; the
// registry includes the tools of the configured MCP servers, which are
// started for it. Call the returned function when done (it stops them).
func (g *globals) toolset(workspace string) (*config.Config, string, *tool.Registry, func(), error) {
	a, loaded, ws, err := g.workspaceApp(g.consoleLogger(false), true, workspace)
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
				// MCP servers name and describe their tools, and the
				// skills' metadata is in read_skill's description.
				fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Line(t.Name()), tool.RiskClassOf(t), termtext.Line(firstLine(t.Description())))
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

// callOutput is the exact object `scv tools call` prints (docs/runtime.md, section 13).
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
			return g.callTool(reg, policy, cfg.Tools.OutputLimitBytes, ws, yes, args[0], raw)
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve the call if the policy asks for approval")
	return cmd
}

// callTool runs one call through toolcall.Run, the path every tool call
// of an agent turn takes too (same denials, crash handling and output
// bound), and prints its result. --yes is the approver.
func (g *globals) callTool(reg *tool.Registry, policy approval.Policy, limit int, ws string, yes bool, name, raw string) error {
	res, runErr := toolcall.Run(g.ctx, toolcall.Call{
		Registry: reg, Policy: policy, Approve: g.flagApprover(yes), Name: name, Args: json.RawMessage(raw),
		Env: tool.Env{Workspace: ws, SessionID: "cli", CallID: "call_1", OutputLimit: limit},
	})
	out := callOutput{Name: name, Success: res.Success, Error: string(res.Error), Truncated: res.Truncated, Output: outputValue(res)}
	if !res.Success && out.Error == "" {
		out.Error = string(tool.Failed)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if err := writeJSONLine(g.stdio.Out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if !res.Success {
		return exitCode(ExitFailure)
	}
	return nil
}

// flagApprover is the command line's approver: --yes approves a call the
// policy asks about; without it the call is denied and stderr says how to
// approve it.
func (g *globals) flagApprover(yes bool) approval.Approver {
	return func(_ context.Context, r approval.Request) approval.Answer {
		if !yes {
			fmt.Fprintf(g.stdio.Err, "scv: %s needs approval (risk %s): %s\n", r.Name, r.Risk, termtext.Block(r.Summary))
			if d := r.Plan.Diff; d != nil {
				printDiff(g.stdio.Err, &proto.Diff{Path: d.Path, Text: d.Text, Added: d.Added, Removed: d.Removed, Omitted: d.Omitted, Note: d.Note})
			}
			fmt.Fprintln(g.stdio.Err, "scv: denied; pass --yes to approve")
		}
		return approval.Answer{Approved: yes}
	}
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
