package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/termtext"
)

// `scv sessions`: the stored sessions of this instance, read from the
// session database directly (docs/store.md); no daemon is needed.

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, search, export, rename, delete and prune stored sessions",
		Long: "Every session (TUI, scv exec, protocol clients) is saved in $SCV_HOME/state/scv.db: prompts, answers,\n" +
			"tool calls with their output, and each turn's events. These commands read and change that database.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErr("sessions needs a subcommand: list, show, search, export, rename, rm or prune")
		},
	}
	cmd.AddCommand(newSessionsListCmd(g), newSessionsShowCmd(g), newSessionsSearchCmd(g), newSessionsExportCmd(g),
		newSessionsRenameCmd(g), newSessionsRmCmd(g), newSessionsPruneCmd(g))
	return cmd
}

// withStore opens the database (holding no session) for one command.
func (g *globals) withStore(fn func(ctx context.Context, st *store.Store) error) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	logger := g.consoleLogger(false)
	st, err := openStore(g.ctx, layout, "", logger)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(g.ctx, st)
}

// runWithStore is a command's RunE that runs fn on its arguments with the
// database open (withStore).
func (g *globals) runWithStore(fn func(ctx context.Context, st *store.Store, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		return g.withStore(func(ctx context.Context, st *store.Store) error { return fn(ctx, st, args) })
	}
}

// canonicalWorkspace resolves a --workspace value like session.start
// does; a directory that no longer exists is used as given (its sessions
// are still stored), a file is refused.
func canonicalWorkspace(dir string) (string, error) {
	abs, err := workspacePath(dir)
	if err != nil {
		return "", err
	}
	var missing *missingWorkspaceError
	if err := checkWorkspace(abs, dir == ""); err != nil && !errors.As(err, &missing) {
		return "", usageErr("%v", err)
	}
	if real, err := paths.CanonicalDir(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

func newSessionsListCmd(g *globals) *cobra.Command {
	var (
		all, jsonOut bool
		workspace    string
		limit        int
	)
	cmd := &cobra.Command{
		Use:   "list [--all|--workspace DIR] [--limit N] [--json]",
		Short: "List sessions of this workspace (or all), most recently used first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return usageErr("--limit must be at least 1")
			}
			return g.withStore(func(ctx context.Context, st *store.Store) error {
				ws := ""
				if !all {
					var err error
					if ws, err = canonicalWorkspace(workspace); err != nil {
						return err
					}
				}
				// --all: every workspace, and the sessions that failed
				// before any answer too.
				page, err := st.ListSessions(ctx, store.ListOptions{Workspace: ws, Limit: limit, HideUnanswered: !all})
				if err != nil {
					return err
				}
				if jsonOut {
					for _, x := range page.Sessions {
						printJSON(g.stdio.Out, server.Summary(st, x))
					}
					return nil
				}
				if len(page.Sessions) == 0 {
					where := "in " + termtext.Line(ws) + " (--all lists every workspace)"
					if all {
						where = "yet"
					}
					fmt.Fprintf(g.stdio.Out, "no sessions %s\n", where)
					return nil
				}
				printSessionTable(g.stdio.Out, st, page.Sessions, all, time.Now())
				if page.Next != "" {
					fmt.Fprintf(g.stdio.Out, "(more: raise --limit)\n")
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list the sessions of every workspace, and those that failed before any answer")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	cmd.Flags().IntVar(&limit, "limit", 50, "most sessions to list")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object per session")
	return cmd
}

func printSessionTable(w io.Writer, st *store.Store, list []store.Session, withWorkspace bool, now time.Time) {
	fmt.Fprintf(w, "%-16s  %-8s  %5s  %9s  %-7s  %s\n", "ID", "UPDATED", "TURNS", "SIZE", "ORIGIN", "TITLE")
	for _, x := range list {
		title := termtext.Line(x.Title)
		if title == "" {
			title = "(no prompt yet)"
		}
		if withWorkspace {
			title += "  — " + termtext.Line(x.Workspace)
		}
		if h, live := st.LiveHolder(x); live {
			title += "  [open in " + termtext.Line(h.String()) + "]"
		}
		fmt.Fprintf(w, "%-16s  %-8s  %5d  %9s  %-7s  %s\n", x.ID, age(now.Sub(x.Updated)), x.Turns, byteSize(x.Bytes), x.Origin, title)
	}
}

// age is a short "how long ago": 45s, 12m, 3h, 5d, 8w.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d < 14*24*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	return fmt.Sprintf("%dw", int(d.Hours()/24/7))
}

func newSessionsShowCmd(g *globals) *cobra.Command {
	var turns int
	cmd := &cobra.Command{
		Use:   "show ID [--turns N]",
		Short: "Show a session: its details and its transcript",
		Args:  cobra.ExactArgs(1),
		RunE: g.runWithStore(func(ctx context.Context, st *store.Store, args []string) error {
			x, err := findSession(ctx, st, args[0])
			if err != nil {
				return err
			}
			list, _, err := st.Turns(ctx, x.ID, 0, turns)
			if err != nil {
				return err
			}
			w := g.stdio.Out
			printSessionHeader(w, st, x)
			if len(list) < x.Turns {
				fmt.Fprintf(w, "(the last %d of %d turns; --turns 0 shows all)\n", len(list), x.Turns)
			}
			for _, t := range list {
				fmt.Fprintln(w)
				writeTranscriptTurn(w, t)
			}
			return nil
		}),
	}
	cmd.Flags().IntVar(&turns, "turns", 20, "show the last N turns (0: all)")
	return cmd
}

func printSessionHeader(w io.Writer, st *store.Store, x store.Session) {
	line := termtext.Line
	fmt.Fprintf(w, "session   %s\ntitle     %s\nworkspace %s\n", x.ID, line(x.Title), line(x.Workspace))
	fmt.Fprintf(w, "model     %s / %s\norigin    %s\n", line(x.Provider), line(x.Model), x.Origin)
	fmt.Fprintf(w, "created   %s\nupdated   %s\n", x.Created.Format(time.DateTime), x.Updated.Format(time.DateTime))
	fmt.Fprintf(w, "turns     %d (%s)\n", x.Turns, byteSize(x.Bytes))
	if u, err := st.SessionUsage(context.Background(), x.ID); err == nil && u.TotalTokens > 0 {
		fmt.Fprintf(w, "usage     %s\n", usageLine(u))
	}
	if x.ForkedFrom != "" {
		fmt.Fprintf(w, "forked    from %s at turn %s\n", x.ForkedFrom, x.ForkedAt)
	}
	if h, live := st.LiveHolder(x); live {
		fmt.Fprintf(w, "open in   %s\n", line(h.String()))
	}
}

// usageLine is a session's tokens and, when any turn had a price, cost.
func usageLine(u store.Usage) string {
	s := fmt.Sprintf("%d tokens (%d in, %d of them cached; %d out)", u.TotalTokens, u.InputTokens, u.CacheReadTokens+u.CacheWriteTokens, u.OutputTokens)
	if u.CostUSD != nil {
		s += fmt.Sprintf(" · $%.4f", *u.CostUSD)
	} else {
		s += " · no known price"
	}
	return s
}

// notFound turns a store's not-found error into one that says what to do.
func notFound(err error, id string) error {
	var amb *store.AmbiguousError
	var short *store.ShortPrefixError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("no session %q (scv sessions list --all shows them)", termtext.Line(id))}
	case errors.As(err, &amb), errors.As(err, &short):
		return usageErr("%s", termtext.Line(err.Error()))
	}
	return err
}

// resolveSession is the id of the session id names: the id itself or a
// unique prefix of it, as git takes a commit's.
func resolveSession(ctx context.Context, st *store.Store, id string) (string, error) {
	full, err := st.ResolveID(ctx, id)
	if err != nil {
		return "", notFound(err, id)
	}
	return full, nil
}

// findSession is the stored session id names (resolveSession).
func findSession(ctx context.Context, st *store.Store, id string) (store.Session, error) {
	full, err := resolveSession(ctx, st, id)
	if err != nil {
		return store.Session{}, err
	}
	x, err := st.Session(ctx, full)
	if err != nil {
		return store.Session{}, notFound(err, id)
	}
	return x, nil
}

func newSessionsSearchCmd(g *globals) *cobra.Command {
	var (
		jsonOut, here bool
		limit         int
	)
	cmd := &cobra.Command{
		Use:   "search TEXT [--here] [--limit N] [--json]",
		Short: "Find turns whose prompt or answer holds every word of TEXT, best match first",
		Args:  cobra.MinimumNArgs(1),
		RunE: g.runWithStore(func(ctx context.Context, st *store.Store, args []string) error {
			opts := store.SearchOptions{Limit: limit}
			if here {
				ws, err := canonicalWorkspace("")
				if err != nil {
					return err
				}
				opts.Workspace = ws
			}
			hits, err := st.Search(ctx, strings.Join(args, " "), opts)
			if err != nil {
				return usageErr("%v", err)
			}
			if jsonOut {
				for _, h := range hits {
					printJSON(g.stdio.Out, h)
				}
				return nil
			}
			if len(hits) == 0 {
				fmt.Fprintln(g.stdio.Out, "no match")
				return exitCode(ExitFailure)
			}
			for _, h := range hits {
				fmt.Fprintf(g.stdio.Out, "%s  turn %d  %s  %s\n    %s: %s\n", h.SessionID, h.TurnN, termtext.Line(h.Title),
					termtext.Line(h.Workspace), h.Field, termtext.Line(h.Line))
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&here, "here", false, "search the sessions of the current workspace only")
	cmd.Flags().IntVar(&limit, "limit", 20, "most matches to show")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object per match")
	return cmd
}

func newSessionsRenameCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rename ID TITLE",
		Short: "Set a session's title",
		Args:  cobra.ExactArgs(2),
		RunE: g.runWithStore(func(ctx context.Context, st *store.Store, args []string) error {
			if strings.TrimSpace(args[1]) == "" {
				return usageErr("the title must not be empty")
			}
			id, err := resolveSession(ctx, st, args[0])
			if err != nil {
				return err
			}
			if err := st.Rename(ctx, id, args[1]); err != nil {
				return notFound(err, args[0])
			}
			x, err := st.Session(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "%s: %s\n", x.ID, termtext.Line(x.Title))
			return nil
		}),
	}
}

func newSessionsRmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Delete sessions with everything stored of them (prompts, answers, tool output)",
		Args:  cobra.MinimumNArgs(1),
		RunE: g.runWithStore(func(ctx context.Context, st *store.Store, args []string) error {
			failed := false
			for _, arg := range args {
				// A prefix deletes only the one session it names.
				id, err := st.ResolveID(ctx, arg)
				if err == nil {
					err = st.Delete(ctx, id)
				} else {
					id = arg
				}
				var busy *store.BusyError
				var amb *store.AmbiguousError
				var short *store.ShortPrefixError
				switch {
				case errors.As(err, &amb), errors.As(err, &short):
					fmt.Fprintf(g.stdio.Err, "scv: %s\n", termtext.Line(err.Error()))
					failed = true
					continue
				case err == nil:
					fmt.Fprintf(g.stdio.Out, "deleted %s\n", id)
					continue
				case errors.Is(err, store.ErrNotFound):
					err = notFound(err, id)
				case errors.As(err, &busy):
					err = fmt.Errorf("%s is not deleted: %v", id, busy)
				}
				fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
				failed = true
			}
			if failed {
				return exitCode(ExitFailure)
			}
			return nil
		}),
	}
}

func newSessionsPruneCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Delete the sessions beyond [history] max_sessions and max_age_days",
		Long: "Delete the sessions beyond [history] max_sessions (least recently used first) and those unused for longer\n" +
			"than max_age_days, never one that is open. The user configuration applies to every session; a project\n" +
			"configuration of the current directory that lowers the limits applies them to this workspace's sessions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := g.consoleLogger(false)
			a, layout, _, err := g.newApp(logger, false)
			if err != nil {
				return err
			}
			defer a.Close()
			user, err := a.LoadConfig("", app.NoOverrides)
			if err != nil {
				return err
			}
			ws, err := canonicalWorkspace("")
			if err != nil {
				return err
			}
			project, err := a.LoadConfig(ws, app.NoOverrides)
			if err != nil {
				return err
			}
			st, err := openStore(g.ctx, layout, "", logger)
			if err != nil {
				return err
			}
			defer st.Close()
			uh, ph := user.Config.History, project.Config.History
			n, err := st.Prune(g.ctx, app.Retention(uh))
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "pruned %d sessions (max_sessions %d, max_age_days %d)\n", n, uh.MaxSessions, uh.MaxAgeDays)
			if ph != uh {
				o := app.Retention(ph)
				o.Workspace = ws
				k, err := st.Prune(g.ctx, o)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdio.Out, "pruned %d sessions of %s (its project configuration: max_sessions %d, max_age_days %d)\n",
					k, termtext.Line(ws), ph.MaxSessions, ph.MaxAgeDays)
			}
			if stats, err := st.Stats(g.ctx); err == nil {
				fmt.Fprintf(g.stdio.Out, "database: %s, %d sessions\n", byteSize(stats.FileBytes), stats.Sessions)
			}
			return nil
		},
	}
}

func newSessionsExportCmd(g *globals) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID [--format markdown|jsonl] [-o FILE]",
		Short: "Write a whole session as Markdown (to read) or JSONL (every stored event)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" && format != "jsonl" {
				return usageErr("--format must be markdown or jsonl, not %q", format)
			}
			return g.withStore(func(ctx context.Context, st *store.Store) error {
				x, err := findSession(ctx, st, args[0])
				if err != nil {
					return err
				}
				turns, _, err := st.Turns(ctx, x.ID, 0, 0)
				if err != nil {
					return err
				}
				w := g.productOut()
				var f *os.File
				if output != "" && output != "-" {
					// Exports hold whatever the session held: owner-only.
					if f, err = os.OpenFile(filepath.Clean(output), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
						return err
					}
					w = f
				}
				if format == "jsonl" {
					err = exportJSONL(w, st, x, turns)
				} else {
					err = exportMarkdown(w, x, turns)
				}
				if f != nil {
					if cerr := f.Close(); err == nil {
						err = cerr
					}
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or jsonl")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE (mode 0600) instead of stdout")
	return cmd
}

// exportJSONL writes the session summary, then per turn its record and
// its event lines exactly as they were sent.
func exportJSONL(w io.Writer, st *store.Store, x store.Session, turns []store.Turn) error {
	write := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	// The lines are kept exactly as stored; on a terminal the visible
	// writer shows what is unsafe in them.
	if err := write(sessionRecord{Type: "scv.session", StoredSession: server.Summary(st, x)}); err != nil {
		return err
	}
	for _, t := range turns {
		rec := turnRecord{Type: "scv.turn", TurnID: t.ID, N: t.N, Prompt: t.Prompt, State: string(t.State), ErrorCode: t.ErrorCode,
			ErrorMessage: t.ErrorMessage, Usage: t.Usage, Answer: t.Answer, Started: t.Started, Ended: t.Ended, Events: len(t.Events)}
		if err := write(rec); err != nil {
			return err
		}
		for _, e := range t.Events {
			if _, err := fmt.Fprintf(w, "%s\n", e.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionRecord is the first line of a JSONL export.
type sessionRecord struct {
	Type string `json:"type"`
	proto.StoredSession
}

// turnRecord is a turn's line in a JSONL export, before its events.
type turnRecord struct {
	Type         string      `json:"type"`
	TurnID       string      `json:"turn_id"`
	N            int         `json:"n"`
	Prompt       string      `json:"prompt"`
	State        string      `json:"state"`
	ErrorCode    string      `json:"error_code,omitempty"`
	ErrorMessage string      `json:"error_message,omitempty"`
	Usage        store.Usage `json:"usage"`
	Answer       string      `json:"answer,omitempty"`
	Started      time.Time   `json:"started"`
	Ended        time.Time   `json:"ended"`
	Events       int         `json:"events"`
}
