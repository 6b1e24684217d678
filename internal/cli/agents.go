package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// newAgentsCmd is `scv agents`: delegation records (ps, kill) and the
// private sign-in of delegated agents (login, logout, status, import).
func newAgentsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Delegated agent runs and the sign-in of delegated agents",
	}
	cmd.AddCommand(newAgentsPsCmd(g), newAgentsKillCmd(g), newAgentsLoginCmd(g),
		newAgentsLogoutCmd(g), newAgentsStatusCmd(g), newAgentsImportCmd(g))
	return cmd
}

func (g *globals) agentsLayout() (paths.Layout, error) { return paths.Resolve(g.scvHome, g.env) }

func (g *globals) tracker() (*delegation.Tracker, error) {
	l, err := g.agentsLayout()
	if err != nil {
		return nil, err
	}
	return delegation.New(delegation.Options{Dir: l.Delegations()})
}

func newAgentsPsCmd(g *globals) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List running delegations of this instance (--all: also orphans awaiting cleanup)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tr, err := g.tracker()
			if err != nil {
				return err
			}
			list, err := tr.List(all)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []delegation.Entry{}
				}
				b, _ := json.MarshalIndent(list, "", "  ")
				fmt.Fprintln(g.stdio.Out, string(b))
				return nil
			}
			if len(list) == 0 {
				fmt.Fprintln(g.stdio.Out, "no delegations")
				return nil
			}
			w := tabwriter.NewWriter(g.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "HANDLE\tAGENT\tSTATE\tPID\tOWNER\tSESSION\tAGE\tCWD")
			for _, e := range list {
				state := "running"
				if e.Orphan {
					state = "orphan"
				}
				if !e.AgentAlive {
					state += " (agent exited)"
				}
				age := time.Since(e.StartedAt).Round(time.Second)
				// Records are files anyone with the home can edit, and the
				// cwd comes from the model: nothing in them may act on the
				// terminal.
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", termtext.Line(e.Handle), termtext.Line(e.Agent), state, e.PID, e.OwnerPID,
					termtext.Line(e.Session), age, termtext.Line(e.Cwd))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also list orphans awaiting cleanup")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as JSON")
	return cmd
}

func newAgentsKillCmd(g *globals) *cobra.Command {
	var orphans bool
	cmd := &cobra.Command{
		Use:   "kill <handle> | --orphans",
		Short: "Stop a delegated run and everything it started, or every orphan",
		RunE: func(cmd *cobra.Command, args []string) error {
			if orphans == (len(args) == 1) || len(args) > 1 {
				return usageErr("give one handle (see `scv agents ps`) or --orphans")
			}
			tr, err := g.tracker()
			if err != nil {
				return err
			}
			if orphans {
				n, err := tr.KillOrphans(g.ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdio.Out, "stopped %d orphaned delegation(s)\n", n)
				return nil
			}
			if err := tr.Kill(g.ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "stopped %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&orphans, "orphans", false, "stop every delegation whose SCV process is gone")
	return cmd
}

// agentSetup is one agent as the sign-in commands see it.
type agentSetup struct {
	a      agents.Adapter
	layout paths.Layout
	home   string
	// keyVars hold SCV's own provider keys; the agent never inherits them.
	keyVars []string
}

// setupAgent applies the user's [agents.<name>] override (the project
// config cannot set agents, so none is read).
func (g *globals) setupAgent(name string) (agentSetup, error) {
	d, ok := agents.Lookup(name)
	if !ok {
		return agentSetup{}, usageErr("unknown agent %q (known: %s)", name, strings.Join(agents.Names(), ", "))
	}
	layout, err := g.agentsLayout()
	if err != nil {
		return agentSetup{}, err
	}
	loaded, err := config.Load(config.Options{Home: layout, ExtraFile: g.configPath, Env: g.env,
		Flags: config.Overrides{Provider: g.provider, BaseURL: g.baseURL, Model: g.model}})
	if err != nil {
		return agentSetup{}, err
	}
	a, err := agents.Apply(d, toOverride(loaded.Config.Agents[name]))
	if err != nil {
		return agentSetup{}, err
	}
	return agentSetup{a: a, layout: layout, home: layout.Adapter(name), keyVars: loaded.Config.KeyVariables()}, nil
}

func toOverride(o config.AgentOverride) agents.Override {
	deref := func(p *[]string) []string {
		if p == nil {
			return nil
		}
		return append([]string{}, (*p)...)
	}
	return agents.Override{Command: o.Command, Args: deref(o.Args), PromptArgs: deref(o.PromptArgs),
		ModelArgs: deref(o.ModelArgs), EffortArgs: deref(o.EffortArgs), Permissions: o.Permissions}
}

// env is the same private home and cleaned environment agent_<name> uses.
func (s agentSetup) env(g *globals) []string {
	base := make([]string, 0, len(g.env))
	for k, v := range g.env {
		base = append(base, k+"="+v)
	}
	sort.Strings(base)
	return s.a.Env(agents.EnvSpec{Base: base, AdapterHome: s.home, SCVHome: s.layout.Home, Remove: s.keyVars})
}

// runAttached runs the agent's own command with the terminal attached.
func (s agentSetup) runAttached(g *globals, args []string) error {
	exe, err := s.a.Resolve(g.env["HOME"], g.env["PATH"])
	if err != nil {
		return fmt.Errorf("%s is not installed: %v", s.a.Title, err)
	}
	if err := s.a.EnsureHome(s.home); err != nil {
		return err
	}
	c := exec.CommandContext(g.ctx, exe, args...)
	c.Env, c.Dir = s.env(g), s.home
	c.Stdin, c.Stdout, c.Stderr = g.stdio.In, g.stdio.Out, g.stdio.Err
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &exitError{code: ExitFailure, msg: fmt.Sprintf("%s %s exited with %v", s.a.Command, strings.Join(args, " "), ee)}
		}
		return fmt.Errorf("run %s: %w", exe, err)
	}
	return nil
}

func newAgentsLoginCmd(g *globals) *cobra.Command {
	var compat bool
	var wireAPI string
	cmd := &cobra.Command{
		Use:   "login <agent> [-- extra arguments]",
		Short: "Sign a delegated agent in, inside its private home",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, extra := args[0], args[1:]
			if dash := cmd.ArgsLenAtDash(); dash > 1 || (dash < 0 && len(extra) > 0) {
				return usageErr("pass extra arguments after --, e.g. scv agents login codex -- --device-auth")
			}
			s, err := g.setupAgent(name)
			if err != nil {
				return err
			}
			if compat && name != "pi" {
				return usageErr("--openai-compatible is only for pi")
			}
			switch {
			case name == "dsh":
				if len(extra) > 0 {
					return usageErr("dsh takes no extra arguments; the key is read from the terminal or stdin, never from arguments")
				}
				return g.loginDsh(s)
			case name == "pi" && compat:
				return g.loginPiCompat(s, wireAPI)
			case name == "pi":
				fmt.Fprintln(g.stdio.Err, "Opening pi: run /login, then /quit.")
				return s.runAttached(g, extra)
			}
			return s.runAttached(g, append(append([]string{}, s.a.LoginArgs...), extra...))
		},
	}
	cmd.Flags().BoolVar(&compat, "openai-compatible", false, "pi: use an OpenAI-compatible endpoint (with --base-url, --wire-api, --model or prompts)")
	cmd.Flags().StringVar(&wireAPI, "wire-api", "", "pi --openai-compatible: responses or chat")
	return cmd
}

// lineReader reads answers and keys from the command's stdin.
type lineReader struct {
	g  *globals
	br *bufio.Reader
}

func (r *lineReader) terminal() (uintptr, bool) {
	if f, ok := r.g.stdio.In.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return f.Fd(), true
	}
	return 0, false
}

func (r *lineReader) line(prompt string) (string, error) {
	if _, ok := r.terminal(); ok {
		fmt.Fprint(r.g.stdio.Err, prompt)
	}
	s, err := r.br.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || s == "") {
		return "", fmt.Errorf("read %s: %w", strings.TrimSuffix(strings.TrimSpace(prompt), ":"), err)
	}
	if len(s) > 8192 {
		return "", errors.New("input line too long")
	}
	return strings.TrimSpace(s), nil
}

// secret reads a key without echo from a terminal, else one line of stdin.
func (r *lineReader) secret(prompt string) (string, error) {
	if fd, ok := r.terminal(); ok {
		fmt.Fprint(r.g.stdio.Err, prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(r.g.stdio.Err)
		if err != nil {
			return "", fmt.Errorf("read key: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return r.line(prompt)
}

func (g *globals) newLineReader() *lineReader {
	in := g.stdio.In
	if in == nil {
		in = strings.NewReader("")
	}
	return &lineReader{g: g, br: bufio.NewReaderSize(io.LimitReader(in, 1<<20), 4096)}
}

func (g *globals) loginDsh(s agentSetup) error {
	key, err := g.newLineReader().secret("DeepSeek API key: ")
	if err != nil {
		return err
	}
	if err := agents.WriteDshKey(s.home, key); err != nil {
		return fmt.Errorf("dsh key: %w", err)
	}
	fmt.Fprintf(g.stdio.Out, "dsh: key stored in %s (mode 0600)\n", agents.DshCredentialFile(s.home))
	return nil
}

func (g *globals) loginPiCompat(s agentSetup, wireAPI string) error {
	r := g.newLineReader()
	e := agents.PiEndpoint{BaseURL: g.baseURL, WireAPI: wireAPI, Model: g.model}
	var err error
	if e.BaseURL == "" {
		if e.BaseURL, err = r.line("Base URL (e.g. https://relay.example/v1): "); err != nil {
			return err
		}
	}
	if e.WireAPI == "" {
		if e.WireAPI, err = r.line("Wire API (responses or chat): "); err != nil {
			return err
		}
	}
	if e.Model == "" {
		if e.Model, err = r.line("Default model: "); err != nil {
			return err
		}
	}
	if e.APIKey, err = r.secret("API key: "); err != nil {
		return err
	}
	return g.writePi(s, e)
}

func (g *globals) writePi(s agentSetup, e agents.PiEndpoint) error {
	if err := s.a.EnsureHome(s.home); err != nil {
		return err
	}
	dir := s.a.StateDirPath(s.home)
	if err := agents.WritePiEndpoint(dir, e); err != nil {
		return fmt.Errorf("pi: %w", err)
	}
	st, err := agents.ReadPiStatus(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdio.Out, "pi: %s\n", st)
	return nil
}

func newAgentsLogoutCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "logout <agent> [-- extra arguments]",
		Short: "Sign a delegated agent out of its private home",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, extra := args[0], args[1:]
			s, err := g.setupAgent(name)
			if err != nil {
				return err
			}
			switch name {
			case "dsh":
				ok, err := agents.RemoveFile(agents.DshCredentialFile(s.home))
				if err != nil {
					return err
				}
				fmt.Fprintln(g.stdio.Out, map[bool]string{true: "dsh: key removed", false: "dsh: no key was stored"}[ok])
				return nil
			case "pi":
				did, err := agents.RemovePiEndpoint(s.a.StateDirPath(s.home))
				if err != nil {
					return err
				}
				if len(did) == 0 {
					did = []string{"nothing to remove"}
				}
				fmt.Fprintf(g.stdio.Out, "pi: %s\n", strings.Join(did, "; "))
				return nil
			}
			return s.runAttached(g, append(append([]string{}, s.a.LogoutArgs...), extra...))
		},
	}
}

func newAgentsStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status [agent]",
		Short: "Show each delegated agent's sign-in state (summaries only, never a key or e-mail)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := agents.Names()
			if len(args) == 1 {
				names = args
			}
			for _, n := range names {
				s, err := g.setupAgent(n)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdio.Out, "%s: %s\n", n, g.signInSummary(s))
			}
			return nil
		},
	}
}

// signInSummary never prints what an agent's own status command said: only
// a summary derived from it.
func (g *globals) signInSummary(s agentSetup) string {
	installed := ""
	if _, err := s.a.Resolve(g.env["HOME"], g.env["PATH"]); err != nil {
		installed = " (not installed)"
	}
	switch s.a.Name {
	case "pi":
		st, err := agents.ReadPiStatus(s.a.StateDirPath(s.home))
		if err != nil {
			return "unreadable files: " + err.Error()
		}
		return st.String() + installed
	case "claude", "codex":
		if installed != "" {
			return "not installed"
		}
		out, code, err := s.capture(g, s.a.StatusArgs)
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		if s.a.Name == "claude" {
			return agents.SummarizeClaudeStatus(out, code)
		}
		return agents.SummarizeCodexStatus(out, code)
	}
	if agents.StoredCredential(s.a, s.home) {
		return "signed in (credentials stored)" + installed
	}
	return "not signed in" + installed
}

// capture runs a status command (stdin /dev/null, 30 s) and returns its
// combined output for summarising.
func (s agentSetup) capture(g *globals, args []string) (string, int, error) {
	exe, err := s.a.Resolve(g.env["HOME"], g.env["PATH"])
	if err != nil {
		return "", 0, err
	}
	if err := s.a.EnsureHome(s.home); err != nil {
		return "", 0, err
	}
	out := proc.NewCapture(64 << 10)
	ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	defer cancel()
	res, err := proc.Run(ctx, proc.Spec{Path: exe, Args: args, Dir: s.home, Env: s.env(g), Stdout: out, Stderr: out, Timeout: 30 * time.Second})
	if err != nil {
		return "", 0, err
	}
	code := -1
	if res.ExitCode != nil {
		code = *res.ExitCode
	}
	return out.String(), code, nil
}

func newAgentsImportCmd(g *globals) *cobra.Command {
	var from string
	var fromProvider bool
	cmd := &cobra.Command{
		Use:   "import codex [--from DIR] | import pi --from-scv-provider",
		Short: "Copy your own Codex setup, or SCV's provider for pi, into the private home",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "codex":
				if fromProvider {
					return usageErr("--from-scv-provider is for pi")
				}
				return g.importCodex(from)
			case "pi":
				if !fromProvider || from != "" {
					return usageErr("use: scv agents import pi --from-scv-provider")
				}
				return g.importPi()
			}
			return usageErr("import supports codex and pi")
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "codex: directory to copy from (default $CODEX_HOME or ~/.codex)")
	cmd.Flags().BoolVar(&fromProvider, "from-scv-provider", false, "pi: use SCV's active provider")
	return cmd
}

func (g *globals) importCodex(from string) error {
	s, err := g.setupAgent("codex")
	if err != nil {
		return err
	}
	if from == "" {
		from = g.env["CODEX_HOME"]
	}
	if from == "" {
		if g.env["HOME"] == "" {
			return errors.New("cannot find ~/.codex without HOME: pass --from DIR")
		}
		from = filepath.Join(g.env["HOME"], ".codex")
	}
	if err := s.a.EnsureHome(s.home); err != nil {
		return err
	}
	rep, err := agents.ImportCodex(from, s.home)
	if err != nil {
		return err
	}
	out := g.stdio.Out
	if rep.ConfigCopied {
		fmt.Fprintf(out, "codex: copied config.toml (model %s, provider %s, effort %s, sandbox_mode %s, approval_policy %s)\n",
			dash(rep.Model), dash(rep.Provider), dash(rep.Effort), dash(rep.Sandbox), dash(rep.Approval))
	} else {
		fmt.Fprintln(out, "codex: no config.toml to copy")
	}
	if rep.AuthCopied {
		fmt.Fprintln(out, "codex: copied auth.json (API key)")
	} else if rep.AuthSkipped != "" {
		fmt.Fprintf(out, "codex: auth.json not copied: %s\n", rep.AuthSkipped)
	}
	for _, k := range rep.EnvKeys {
		fmt.Fprintf(g.stdio.Err, "warning: provider %s reads its key from the environment (env_key), but delegated agents never inherit key variables and the user service does not load your shell profile: use a key in auth.json or experimental_bearer_token instead\n", k)
	}
	fmt.Fprintln(out, "codex: this is a snapshot; re-run the import after changing your own Codex configuration")
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (g *globals) importPi() error {
	s, err := g.setupAgent("pi")
	if err != nil {
		return err
	}
	loaded, err := config.Load(config.Options{Home: s.layout, ExtraFile: g.configPath, Env: g.env,
		Flags: config.Overrides{Provider: g.provider, BaseURL: g.baseURL, Model: g.model}})
	if err != nil {
		return err
	}
	c := loaded.Config
	name := c.Provider.Active
	p, ok := c.Providers[name]
	if !ok {
		return fmt.Errorf("active provider %q is not configured", name)
	}
	key := p.APIKey.Reveal()
	if key == "" && p.APIKeyEnv != "" {
		key = g.env[p.APIKeyEnv]
	}
	if key == "" {
		return fmt.Errorf("provider %s has no key: set %s (read now, at import time) or api_key in the user config", name, dash(p.APIKeyEnv))
	}
	return g.writePi(s, agents.PiEndpoint{BaseURL: p.BaseURL, WireAPI: p.WireAPI, Model: p.Model, APIKey: key})
}
