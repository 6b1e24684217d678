package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/termtext"
)

// loadConfig resolves the instance home and loads every config layer;
// workspace "" means no project layer. A bad --approval-policy is a usage
// error (exit 2); any other configuration problem is a plain error (exit 1)
// naming the file, line and key.
//
// It logs nothing: `scv config show`, its one caller, prints the
// deprecation notes among the settings instead of warning on stderr.
func (g *globals) loadConfig(workspace string) (*config.Loaded, paths.Layout, error) {
	a, layout, _, err := g.newApp(slog.New(slog.DiscardHandler), false)
	if err != nil {
		return nil, layout, err
	}
	defer a.Close()
	l, err := a.LoadConfig(workspace, app.NoOverrides)
	return l, layout, err
}

// workspaceApp builds the app (newApp) and loads the configuration of a
// --workspace value (empty: the current directory) made canonical, which
// it returns too; the caller closes the app.
func (g *globals) workspaceApp(logger *slog.Logger, withTracker bool, workspace string) (*app.App, *config.Loaded, string, error) {
	a, _, _, err := g.newApp(logger, withTracker)
	if err != nil {
		return nil, nil, "", err
	}
	ws, err := workspaceDir(workspace)
	if err != nil {
		return nil, nil, "", err
	}
	if ws, err = paths.CanonicalDir(ws); err != nil {
		return nil, nil, "", usageErr("workspace %v", err)
	}
	loaded, err := a.LoadConfig(ws, app.NoOverrides)
	if err != nil {
		return nil, nil, "", err
	}
	return a, loaded, ws, nil
}

// loadWorkspaceConfig is loadConfig for a --workspace value (empty: the
// current directory), for the commands that show what applies there.
func (g *globals) loadWorkspaceConfig(ws string) (*config.Loaded, error) {
	dir, err := workspacePath(ws)
	if err != nil {
		return nil, err
	}
	l, _, err := g.loadConfig(dir)
	return l, err
}

// projectLayerFlag is the --workspace flag of the commands that show the
// configuration: it names the project layer.
func projectLayerFlag(cmd *cobra.Command, ws *string) {
	cmd.Flags().StringVar(ws, "workspace", "", "workspace whose .scv/config.toml is the project layer (default: the current directory)")
}

// checkPolicyFlag makes a bad --approval-policy a usage error (exit 2)
// before any config is read.
func (g *globals) checkPolicyFlag() error {
	switch g.approvalPolicy {
	case "", config.PolicyAskOnRisk, config.PolicyAskAlways, config.PolicyDenyOnRisk, config.PolicyAskUnsandboxed:
		return nil
	}
	if _, ok := config.PolicyAlias(g.approvalPolicy); ok {
		return nil // accepted; config.Load notes the deprecated name
	}
	return usageErr("--approval-policy must be ask-on-risk, ask-always, deny-on-risk or ask-unsandboxed, not %q", g.approvalPolicy)
}

// workspaceDir is dir made absolute, or the current directory; it must be
// an existing directory (one clear message for every command that takes
// a workspace).
func workspaceDir(dir string) (string, error) {
	abs, err := workspacePath(dir)
	if err != nil {
		return "", err
	}
	if err := checkWorkspace(abs, dir == ""); err != nil {
		return "", usageErr("%v", err)
	}
	return abs, nil
}

// workspacePath is dir made absolute, or the current directory, which
// must still exist.
func workspacePath(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", usageErr("the current directory cannot be used as the workspace (%v): it was probably deleted; cd into an existing directory and run scv again", err)
		}
		return wd, nil
	}
	return filepath.Abs(dir)
}

// missingWorkspaceError is a workspace that does not exist.
type missingWorkspaceError struct{ msg string }

func (e *missingWorkspaceError) Error() string { return e.msg }

// checkWorkspace says what is wrong with abs as a workspace, or nil.
func checkWorkspace(abs string, current bool) error {
	fi, err := os.Stat(abs)
	what := "workspace"
	if current {
		what = "workspace (the current directory)"
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &missingWorkspaceError{fmt.Sprintf("%s %s does not exist; pass --workspace with an existing directory", what, termtext.Line(abs))}
	case err != nil:
		return fmt.Errorf("%s %s cannot be used: %v", what, termtext.Line(abs), err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s is not a directory; pass --workspace with a directory", what, termtext.Line(abs))
	}
	return nil
}

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Write, show and locate the configuration",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageErr("config needs a subcommand: init, show or path")
		},
	}
	cmd.AddCommand(newConfigInitCmd(g), newConfigShowCmd(g), newConfigPathCmd(g))
	return cmd
}

func newConfigInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Write a commented user config ($SCV_HOME/config.toml); never overwrites",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			if err := layout.Ensure(); err != nil {
				return err
			}
			path := layout.ConfigFile()
			if err := writeNew(path, []byte(config.CommentedTemplate())); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%s already exists; edit it, or move it away and run scv config init again", path)
				}
				return fmt.Errorf("write %s: %w", path, err)
			}
			fmt.Fprintf(g.stdio.Out, "wrote %s\n", path)
			return nil
		},
	}
}

// writeNew creates path (0600) with data; it fails if path exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

func newConfigShowCmd(g *globals) *cobra.Command {
	var ws string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print every effective setting and where it came from (secrets hidden)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			l, err := g.loadWorkspaceConfig(ws)
			if err != nil {
				return err
			}
			// Values, keys (of tables such as [mcp.servers.NAME]) and
			// paths come from files: each is one line made visible.
			line := termtext.Line
			for _, s := range l.Explain() {
				fmt.Fprintf(g.stdio.Out, "%s = %s  # %s\n", line(s.Key), line(s.Value), line(s.Origin))
			}
			for _, d := range l.Deprecated {
				fmt.Fprintf(g.stdio.Out, "## deprecated: %s\n", line(d.String()))
			}
			printWireNotes(g.stdio.Out, &l.Config)
			printSandboxNotes(g.stdio.Out, &l.Config)
			printRuleNotes(g.stdio.Out, &l.Config)
			return nil
		},
	}
	projectLayerFlag(cmd, &ws)
	return cmd
}

// printRuleNotes explains the saved approval rules and lists each with
// what it does and where it is written.
func printRuleNotes(w io.Writer, c *config.Config) {
	rules := c.Approvals.Rules
	fmt.Fprintf(w, "## Saved approval rules (docs/configuration.md, \"Saved approval rules\"): %d\n", len(rules))
	fmt.Fprintf(w, "##   approvals.rules: %s\n", config.KeyDoc("approvals.rules"))
	for _, r := range rules {
		g, err := r.Spec().Rule()
		if err != nil {
			continue // refused at load
		}
		where := ""
		if g.Workspace != "" {
			where = " in " + g.Workspace
		}
		fmt.Fprintf(w, "##   %s%s (%s)\n", termtext.Line(approval.Describe(g)), termtext.Line(where), termtext.Line(r.Where()))
	}
}

// printWireNotes explains, after the settings, each wire API (which
// profiles use it, what SCV sends, keeps and drops) and how the provider
// limits apply.
func printWireNotes(w io.Writer, c *config.Config) {
	active, _ := c.ActiveProvider()
	fmt.Fprintln(w, "## Wire APIs (docs/model.md has the details):")
	for _, wire := range []string{config.WireResponses, config.WireChat, config.WireAnthropic} {
		var users []string
		for name, p := range c.Providers {
			if p.WireAPI == wire {
				if name == active {
					name += " (active)"
				}
				users = append(users, name)
			}
		}
		slices.Sort(users)
		if len(users) == 0 {
			users = []string{"no profile"}
		}
		fmt.Fprintf(w, "## wire_api = %q, used by %s:\n", wire, termtext.Line(strings.Join(users, ", ")))
		for _, line := range model.Describe(wire) {
			fmt.Fprintf(w, "##   %s\n", line)
		}
	}
	pl := c.ProviderLimits
	fmt.Fprintln(w, "## Provider limits:")
	for _, line := range model.LimitRules(model.Limits{MaxSSEEventBytes: pl.MaxSSEEventBytes, MaxResponseBytes: pl.MaxResponseBytes,
		MaxAssistantBytes: pl.MaxAssistantBytes, MaxToolCalls: pl.MaxToolCalls, MaxToolArgumentsBytes: pl.MaxToolArgumentsBytes}) {
		fmt.Fprintf(w, "##   %s\n", line)
	}
}

func newConfigPathCmd(g *globals) *cobra.Command {
	var ws string
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print the config file paths: user, project, and the --config file if any",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			dir, err := workspacePath(ws)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "user %s\nproject %s\n", layout.ConfigFile(), paths.ProjectConfig(dir))
			extra := g.configPath
			if extra == "" {
				extra = g.env["SCV_CONFIG"]
			}
			if extra != "" {
				fmt.Fprintf(g.stdio.Out, "config %s\n", extra)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace whose project config to print (default: the current directory)")
	return cmd
}
