package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/signin"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// newAgentsCmd is `scv agents`: delegation records (ps, kill), the
// conversations sessions keep with delegated agents, and the
// private sign-in of delegated agents (login, logout, status, import).
func newAgentsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Delegated agent runs and the sign-in of delegated agents",
	}
	cmd.AddCommand(newAgentsPsCmd(g), newAgentsKillCmd(g), newAgentsConversationsCmd(g), newAgentsLoginCmd(g),
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

// killOrphans is the reconcile every serving process runs at start, done
// now: the delegations and bash calls of SCV processes that died, and the
// processes left in their cgroup leaves (where this system has cgroup v2;
// the leaves of this home only). The count is of delegations; stopped calls
// and leaves are reported on stderr.
func (g *globals) killOrphans() (int, error) {
	l, err := g.agentsLayout()
	if err != nil {
		return 0, err
	}
	// Info too: what was stopped besides delegations is said on stderr.
	logger := slog.New(&consoleHandler{w: g.stdio.Err, level: slog.LevelInfo, mu: &sync.Mutex{}})
	if g.env["SCV_LOG"] == "debug" {
		logger = g.consoleLogger(false)
	}
	tr, err := delegation.New(delegation.Options{Dir: l.Delegations(), CallDir: l.Calls(), Logger: logger})
	if err != nil {
		return 0, err
	}
	// A leaf is made only under cgroup tracking, so only a cgroup
	// containment can find what a dead one left; without cgroup v2 there
	// are no leaves to find.
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechCgroup, Instance: l.Home, Logger: logger, NoReaper: true})
	if err != nil {
		c = nil
	}
	defer c.Close()
	return app.Reconcile(g.ctx, tr, c, logger)
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
				return writeJSONLine(g.stdio.Out, b)
			}
			if len(list) == 0 {
				fmt.Fprintln(g.stdio.Out, "no delegations")
				return nil
			}
			w := tabwriter.NewWriter(g.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "HANDLE\tAGENT\tSTATE\tPID\tOWNER\tSESSION\tJOB\tAGE\tCWD")
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
				job := "-" // a call its turn waits for
				if e.Job != "" {
					job = termtext.Line(e.Job)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", termtext.Line(e.Handle), termtext.Line(e.Agent), state, e.PID, e.OwnerPID,
					termtext.Line(e.Session), job, age, termtext.Line(e.Cwd))
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
		Use:   "kill <handle> | <job> | --orphans",
		Short: "Stop a delegated run and everything it started, or every orphan",
		RunE: func(cmd *cobra.Command, args []string) error {
			if orphans == (len(args) == 1) || len(args) > 1 {
				return usageErr("give one handle or background job (see `scv agents ps`) or --orphans")
			}
			if orphans {
				n, err := g.killOrphans()
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdio.Out, "stopped %d orphaned delegation(s)\n", n)
				return nil
			}
			tr, err := g.tracker()
			if err != nil {
				return err
			}
			handle, err := runOf(tr, args[0])
			if err != nil {
				return err
			}
			if err := tr.Kill(g.ctx, handle); err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "stopped %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&orphans, "orphans", false, "stop every delegation whose SCV process is gone")
	return cmd
}

// signIn is the sign-in of the named agent, built by the app from the
// user config (its override, private home and environment).
func (g *globals) signIn(name string) (signin.Method, error) {
	if _, ok := agents.Lookup(name); !ok {
		return nil, usageErr("unknown agent %q (known: %s)", name, strings.Join(agents.Names(), ", "))
	}
	a, _, _, err := g.newApp(g.consoleLogger(false), false)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.SignIn(name)
}

// signInIO is the terminal side of a sign-in.
func (g *globals) signInIO() signin.IO {
	return signin.IO{In: g.stdio.In, Out: g.stdio.Out, Err: g.stdio.Err, Prompt: g.newLineReader()}
}

// attachedIO is signInIO for login and logout, which may run the agent's
// own CLI: it gets the terminal itself, as when the user runs it, so its
// prompts and browser flow work.
func (g *globals) attachedIO() signin.IO {
	return signin.IO{In: g.stdio.In, Out: g.raw.Out, Err: g.raw.Err, Prompt: g.newLineReader()}
}

// signInErr makes a request the sign-in refuses a usage error (exit 2) and
// anything else a failure (exit 1).
func signInErr(err error) error {
	var ue *signin.UsageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return usageErr("%s", ue)
	}
	return &exitError{code: ExitFailure, msg: err.Error()}
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
			m, err := g.signIn(name)
			if err != nil {
				return err
			}
			return signInErr(m.Login(g.ctx, g.attachedIO(), signin.LoginRequest{Extra: extra, OpenAICompatible: compat,
				Endpoint: signin.Endpoint{BaseURL: g.baseURL, WireAPI: wireAPI, Model: g.model}}))
		},
	}
	cmd.Flags().BoolVar(&compat, "openai-compatible", false, "pi: use an OpenAI-compatible endpoint (with --base-url, --wire-api, --model or prompts)")
	cmd.Flags().StringVar(&wireAPI, "wire-api", "", "pi --openai-compatible: responses or chat")
	return cmd
}

// lineReader reads answers and keys from the command's stdin; it is the
// sign-in's Prompter.
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

// Line reads one answer, prompting only on a terminal.
func (r *lineReader) Line(prompt string) (string, error) {
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

// Secret reads a key without echo from a terminal, else one line of stdin.
func (r *lineReader) Secret(prompt string) (string, error) {
	if fd, ok := r.terminal(); ok {
		fmt.Fprint(r.g.stdio.Err, prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(r.g.stdio.Err)
		if err != nil {
			return "", fmt.Errorf("read key: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return r.Line(prompt)
}

func (g *globals) newLineReader() *lineReader {
	in := g.stdio.In
	if in == nil {
		in = strings.NewReader("")
	}
	return &lineReader{g: g, br: bufio.NewReaderSize(io.LimitReader(in, 1<<20), 4096)}
}

func newAgentsLogoutCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "logout <agent> [-- extra arguments]",
		Short: "Sign a delegated agent out of its private home",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := g.signIn(args[0])
			if err != nil {
				return err
			}
			return signInErr(m.Logout(g.ctx, g.attachedIO(), args[1:]))
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
			missing := false
			for _, n := range names {
				m, err := g.signIn(n)
				if err != nil {
					return err
				}
				// The summary may quote the agent's own files (pi's
				// default provider and model): one line, made visible.
				st := m.Status(g.ctx)
				missing = missing || strings.HasPrefix(st, signin.NotInstalled)
				fmt.Fprintf(g.stdio.Out, "%s: %s\n", n, termtext.Line(st))
			}
			if missing {
				fmt.Fprintln(g.stdio.Out, "(not installed: put the agent's CLI on PATH, or name it with command = \"/path\" in [agents.NAME] of the user config)")
			}
			return nil
		},
	}
}

func newAgentsImportCmd(g *globals) *cobra.Command {
	var from string
	var fromProvider bool
	cmd := &cobra.Command{
		Use:   "import codex [--from DIR] | import pi --from-scv-provider",
		Short: "Copy your own Codex setup, or SCV's provider for pi, into the private home",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(signin.Importers(), args[0]) {
				return usageErr("import supports %s", strings.Join(signin.Importers(), " and "))
			}
			m, err := g.signIn(args[0])
			if err != nil {
				return err
			}
			return signInErr(m.Import(g.ctx, g.signInIO(), signin.ImportRequest{From: from, UserEnv: g.env, FromProvider: fromProvider,
				Provider: g.activeEndpoint}))
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "codex: directory to copy from (default $CODEX_HOME or ~/.codex)")
	cmd.Flags().BoolVar(&fromProvider, "from-scv-provider", false, "pi: use SCV's active provider")
	return cmd
}

// activeEndpoint is SCV's active provider for pi, its key read now.
func (g *globals) activeEndpoint() (signin.Endpoint, error) {
	a, _, _, err := g.newApp(g.consoleLogger(false), false)
	if err != nil {
		return signin.Endpoint{}, err
	}
	defer a.Close()
	return a.ActiveEndpoint()
}
