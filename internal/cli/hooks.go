package cli

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/termtext"
)

func newHooksCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "hooks", Short: "List the configured hooks and try them with a sample event"}
	cmd.AddCommand(newHooksListCmd(g), newHooksTestCmd(g))
	return cmd
}

func newHooksListCmd(g *globals) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the hooks a session in a workspace runs, in the order they run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, loaded, _, err := g.mcpSetup(workspace)
			if err != nil {
				return err
			}
			defer a.Close()
			cfg := &loaded.Config
			out := g.stdio.Out
			fmt.Fprintf(out, "workspace hooks: %s (hooks.allow_workspace, %s)\n", map[bool]string{true: "allowed", false: "refused"}[cfg.Hooks.AllowWorkspace],
				loaded.Origin("hooks.allow_workspace"))
			hs := app.HookList(cfg)
			if len(hs) == 0 {
				fmt.Fprintln(out, "no hooks configured; add a [[hooks.run]] table to the user config (see docs/hooks.md)")
				return nil
			}
			for _, h := range hs {
				match := ""
				if h.Match != "" {
					match = "  match " + termtext.Line(h.Match)
				}
				onError := ""
				if h.Event == hooks.PreTool || h.Event == hooks.UserPrompt {
					onError = "  on_error " + orDefault(h.OnError, hooks.OnErrorDeny)
				}
				fmt.Fprintf(out, "%s  %s%s  timeout %s%s\n  command %s\n  from %s\n", termtext.Line(h.Name), h.Event, match, h.Timeout, onError,
					termtext.Line(quoteArgs(h.Command)), termtext.Line(h.Source))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace whose .scv/config.toml also counts (default: the current directory)")
	return cmd
}

func newHooksTestCmd(g *globals) *cobra.Command {
	var workspace, toolName, args, prompt string
	cmd := &cobra.Command{
		Use:   "test EVENT",
		Short: "Run the hooks of EVENT with a sample event and show what each decided",
		Long: "Runs the hooks of EVENT that match --tool with a sample event on their standard input, in the\n" +
			"workspace, exactly as a session would, and prints each run and the decision. Nothing else runs:\n" +
			"no model, no tool. Exits 1 when a hook failed.\n\nEvents: " + strings.Join(config.HookEvents, ", ") + ".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			event := argv[0]
			if !slices.Contains(config.HookEvents, event) {
				return usageErr("unknown hook event %q; events: %s", event, strings.Join(config.HookEvents, ", "))
			}
			if args != "" && !json.Valid([]byte(args)) {
				return usageErr("--args must be a JSON object, e.g. --args '{\"command\":\"ls\"}'")
			}
			a, loaded, ws, err := g.mcpSetup(workspace)
			if err != nil {
				return err
			}
			defer a.Close()
			cfg := &loaded.Config
			r := hooks.New(hooks.Options{Hooks: app.HookList(cfg), Env: a.HookEnv(cfg), Workspace: ws, SessionID: "hooks-test",
				Logger: g.stderrLoggerAt(slog.LevelError)})
			in := sampleEvent(event, toolName, args, prompt)
			tool := ""
			if in.Tool != nil {
				tool = in.Tool.Name
			}
			if !r.Has(event, tool) {
				fmt.Fprintf(g.stdio.Out, "no %s hook matches%s\n", event, map[bool]string{true: " tool " + termtext.Line(tool)}[tool != ""])
				return nil
			}
			failed := false
			d := r.Run(g.ctx, in, func(ran hooks.Ran) {
				fmt.Fprintf(g.stdio.Out, "%s  %s  %d ms", termtext.Line(ran.Hook), ran.Outcome, ran.Duration.Milliseconds())
				if ran.ExitCode != nil {
					fmt.Fprintf(g.stdio.Out, "  exit %d", *ran.ExitCode)
				}
				fmt.Fprintln(g.stdio.Out)
				if ran.Reason != "" {
					fmt.Fprintf(g.stdio.Out, "  reason: %s\n", termtext.Line(ran.Reason))
				}
				if ran.Stderr != "" {
					fmt.Fprintf(g.stdio.Out, "  stderr:\n%s\n", indent(termtext.Block(ran.Stderr)))
				}
				failed = failed || ran.Outcome == hooks.OutcomeFailed
			})
			printDecision(g, event, d)
			if failed {
				return exitCode(ExitFailure)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&workspace, "workspace", "", "workspace the hooks run in (default: the current directory)")
	f.StringVar(&toolName, "tool", "bash", "tool of a sample pre_tool, post_tool or approval_requested event")
	f.StringVar(&args, "args", "", `arguments of the sample call (JSON; default {"command":"echo hello"})`)
	f.StringVar(&prompt, "prompt", "hello", "prompt of a sample user_prompt event")
	return cmd
}

// sampleEvent is the event `scv hooks test` feeds.
func sampleEvent(event, toolName, args, prompt string) hooks.Input {
	in := hooks.Input{Event: event, TurnID: "turn-test"}
	if args == "" {
		args = `{"command":"echo hello"}`
	}
	tool := &hooks.Tool{Name: toolName, CallID: "call-test", Risk: "process", Summary: "sample call of " + toolName, Arguments: json.RawMessage(args)}
	switch event {
	case hooks.SessionStart, hooks.SessionEnd:
		in.TurnID = ""
	case hooks.UserPrompt:
		in.Prompt = prompt
	case hooks.PreTool:
		in.Tool = tool
	case hooks.PostTool:
		in.Tool = tool
		in.Result = &hooks.Result{Success: true, Output: "hello\n"}
	case hooks.ApprovalRequested:
		in.Tool, in.ApprovalID = tool, "ap_test"
	case hooks.TurnEnd:
		in.Outcome = "completed"
	}
	return in
}

func printDecision(g *globals, event string, d hooks.Decision) {
	out := g.stdio.Out
	switch {
	case d.Deny && event == hooks.UserPrompt:
		fmt.Fprintf(out, "decision: the prompt is blocked by %s: %s\n", termtext.Line(d.Hook), termtext.Line(d.Reason))
	case d.Deny:
		fmt.Fprintf(out, "decision: the call is denied by %s: %s\n", termtext.Line(d.Hook), termtext.Line(d.Reason))
	case d.Ask:
		fmt.Fprintf(out, "decision: the call needs a person's approval (%s: %s)\n", termtext.Line(d.Hook), termtext.Line(d.Reason))
	case event == hooks.PreTool:
		fmt.Fprintln(out, "decision: the call goes on to the approval policy")
	case event == hooks.UserPrompt:
		fmt.Fprintln(out, "decision: the prompt goes to the model")
	}
	if d.Context != "" {
		fmt.Fprintf(out, "context added to the prompt:\n%s\n", indent(termtext.Block(d.Context)))
	}
	if d.Note != "" {
		fmt.Fprintf(out, "note added to the result:\n%s\n", indent(termtext.Block(d.Note)))
	}
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// quoteArgs shows an argv as one line, quoting words with spaces.
func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
