package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/sandbox"
)

// runSandboxExec is the hidden `scv sandbox-exec --policy=JSON -- PATH
// ARGS...` that SCV itself starts to confine a child: it is dispatched
// before any flag parsing or configuration, applies the rules and execs
// the command (sandbox.Main), and returns only when that failed.
func runSandboxExec(args []string, stdio Stdio) int {
	return sandbox.Main(args, stdio.Err)
}

func newSandboxCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Show what the OS sandbox enforces on this machine",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageErr("sandbox needs a subcommand: check")
		},
	}
	cmd.AddCommand(newSandboxCheckCmd(g))
	return cmd
}

func newSandboxCheckCmd(g *globals) *cobra.Command {
	var ws string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "check [--workspace DIR] [--json]",
		Short: "Print the kernel's Landlock ABI, which sandbox rules it enforces, and the configured sandbox (exit 1 if it would refuse to run commands)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			l, err := g.loadWorkspaceConfig(ws)
			if err != nil {
				return err
			}
			rep := sandbox.Probe()
			st := sandboxState(&l.Config, rep)
			if jsonOut {
				printJSON(g.stdio.Out, st)
			} else {
				fmt.Fprint(g.stdio.Out, rep.Text(l.Config.Sandbox.Network))
				fmt.Fprintf(g.stdio.Out, "configured: %s\n", st.Summary)
			}
			if st.Refuses != "" {
				if !jsonOut {
					fmt.Fprintf(g.stdio.Out, "sandboxed commands are refused: %s\n", st.Refuses)
				}
				return exitCode(ExitFailure)
			}
			return nil
		},
	}
	projectLayerFlag(cmd, &ws)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the report as JSON")
	return cmd
}

// sandboxStatus is the sandbox part of `scv status` and `scv sandbox check`.
type sandboxStatus struct {
	Available bool           `json:"available"`
	Reason    string         `json:"reason,omitempty"`
	ABI       int            `json:"landlock_abi"`
	Rules     []sandbox.Rule `json:"rules"`
	Mode      string         `json:"mode"`
	Network   bool           `json:"network"`
	AppliesTo []string       `json:"applies_to"`
	// Summary is one line: mode, network, what it applies to.
	Summary string `json:"summary"`
	// Missing are the rules a sandboxed command would run without.
	Missing []string `json:"missing"`
	// Refuses says why sandboxed commands would not run ("" when they do,
	// or the sandbox is off).
	Refuses string `json:"refuses,omitempty"`
}

func sandboxState(c *config.Config, rep sandbox.Report) sandboxStatus {
	sb := c.Sandbox
	st := sandboxStatus{Available: rep.Available, Reason: rep.Reason, ABI: rep.ABI, Rules: rep.Rules(), Mode: sb.Mode,
		Network: sb.Network, AppliesTo: sb.AppliesTo, Missing: rep.Missing(sb.Network)}
	if st.Missing == nil {
		st.Missing = []string{}
	}
	if sb.Mode == config.SandboxOff {
		st.Summary = "off (commands run with your rights; set sandbox.mode to confine them)"
		return st
	}
	net := "no network"
	if sb.Network {
		net = "network allowed"
	}
	st.Summary = fmt.Sprintf("%s, %s, for %s", sb.Mode, net, strings.Join(sb.AppliesTo, ", "))
	switch {
	case !rep.Available:
		st.Refuses = rep.Reason + "; set sandbox.mode = \"off\""
	case len(st.Missing) > 0 && !sb.BestEffort:
		st.Refuses = "this kernel cannot enforce " + strings.Join(st.Missing, "; ") + "; set sandbox.best_effort = true or sandbox.mode = \"off\""
	case len(st.Missing) > 0:
		st.Summary += " (best effort: " + fmt.Sprint(len(st.Missing)) + " rule(s) not enforced)"
	}
	return st
}

// printSandboxLine writes the sandbox line of `scv status`.
func printSandboxLine(w io.Writer, st sandboxStatus) {
	kernel := fmt.Sprintf("Landlock ABI %d, %d of %d rules enforced", st.ABI, len(st.Rules)-len(st.Missing), len(st.Rules))
	if !st.Available {
		kernel = "unavailable: " + st.Reason
	}
	fmt.Fprintf(w, "  sandbox:     %s\n  kernel:      %s (scv sandbox check)\n", st.Summary, kernel)
	if st.Refuses != "" {
		fmt.Fprintf(w, "  sandbox:     sandboxed commands are REFUSED: %s\n", st.Refuses)
	}
}

// sandboxStatus is the sandbox of the user configuration on this machine's
// kernel (the daemon runs here too), or nil when the configuration does
// not load (scv config show says why).
func (g *globals) sandboxStatus() *sandboxStatus {
	l, _, err := g.loadConfig("")
	if err != nil {
		return nil
	}
	st := sandboxState(&l.Config, sandbox.Probe())
	return &st
}

// printSandboxNotes explains, after the settings of `scv config show`, each
// sandbox key and what this machine's kernel makes of them.
func printSandboxNotes(w io.Writer, c *config.Config) {
	st := sandboxState(c, sandbox.Probe())
	fmt.Fprintf(w, "## Sandbox (docs/sandbox.md): %s\n", st.Summary)
	for _, k := range []string{"mode", "network", "writable_roots", "deny_read", "applies_to", "best_effort"} {
		fmt.Fprintf(w, "##   sandbox.%s: %s\n", k, config.KeyDoc("sandbox."+k))
	}
	if !st.Available {
		fmt.Fprintf(w, "##   this machine: unavailable (%s)\n", st.Reason)
	} else {
		fmt.Fprintf(w, "##   this machine: Landlock ABI %d, %d of %d rules enforced (scv sandbox check lists them)\n", st.ABI, len(st.Rules)-len(st.Missing), len(st.Rules))
	}
	if st.Refuses != "" {
		fmt.Fprintf(w, "##   sandboxed commands are refused: %s\n", st.Refuses)
	}
}
