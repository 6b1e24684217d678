package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/version"
)

// `scv undo`: undo the write-tool changes of a stored session's last
// writing turn (session.undo, docs/protocol.md). Like `scv exec`, it serves
// the protocol in this process over pipes; a session that the daemon has
// open is undone through the daemon instead.

func newUndoCmd(g *globals) *cobra.Command {
	var workspace, sessionID string
	var yes bool
	cmd := &cobra.Command{
		Use:   "undo [--session ID] [--yes]",
		Short: "Undo the file changes of the last turn of the workspace's latest session",
		Long: "Restores every file the session's last writing turn wrote with the write tool to its content before that\n" +
			"turn, and removes the files it created. It shows what will change and asks first (--yes when stdin is not a\n" +
			"terminal). Changes made through bash or delegated agents are not tracked. A file changed since the turn\n" +
			"wrote it stops the undo before anything changes. Run it again to undo the writing turn before.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ws, err := workspaceDir(workspace)
			if err != nil {
				return err
			}
			if !yes && !stdinTerminal(g.stdio.In) {
				return usageErr("stdin is not a terminal, so scv undo cannot ask: pass --yes to undo without asking")
			}
			logger := g.consoleLogger(false)
			// Undo runs no turn, so the provider's key is not needed.
			a, layout, _, err := g.newAppWith(logger, false, func(o *app.Options) { o.KeyOptional = true })
			if err != nil {
				return err
			}
			defer a.Close()
			loaded, err := a.LoadConfig(ws, app.NoOverrides)
			if err != nil {
				return err
			}
			srv, stop, err := openServer(g.ctx, a, layout, &loaded.Config, "scv undo", logger)
			if err != nil {
				return err
			}
			defer stop()
			serveInProcess(srv, func(conn *client.Conn) {
				err = g.undo(conn, undoRun{ws: ws, sessionID: sessionID, yes: yes, dial: func(ctx context.Context) (*client.Conn, error) {
					return g.dialDaemon(ctx, layout)
				}})
			})
			return err
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "the session to undo in (default: the workspace's latest)")
	cmd.Flags().BoolVar(&yes, "yes", false, "undo without asking")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	return cmd
}

type undoRun struct {
	ws, sessionID string
	yes           bool
	// dial reaches the daemon, for a session it has open.
	dial func(ctx context.Context) (*client.Conn, error)
}

func (g *globals) undo(conn *client.Conn, r undoRun) error {
	ctx := g.ctx
	if _, err := conn.Initialize(ctx, "scv-undo", version.Version); err != nil {
		return err
	}
	id := r.sessionID
	if id == "" {
		list, err := client.CallFor[*proto.SessionListed](ctx, conn, &proto.SessionList{Workspace: r.ws, Limit: 1, All: true})
		if err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
		if len(list.Sessions) == 0 {
			return &exitError{code: ExitFailure, msg: fmt.Sprintf("no stored session in %s: nothing to undo", termtext.Line(r.ws))}
		}
		id = list.Sessions[0].SessionID
	}
	resumed, err := client.CallFor[*proto.SessionResumed](ctx, conn, &proto.SessionResume{SessionID: id, MaxTurns: 1})
	var re *client.RequestError
	if errors.As(err, &re) && re.Code == proto.ErrSessionBusy && r.dial != nil {
		// Open in another process: the daemon undoes it if it holds it
		// and no client has it open.
		dconn, derr := r.dial(ctx)
		if derr != nil {
			return &exitError{code: ExitFailure, msg: fmt.Sprintf("session %s is open elsewhere (%s); undo it there (/undo in the TUI), or close it and run scv undo again", termtext.Line(id), termtext.Line(re.Message))}
		}
		defer dconn.Close()
		conn = dconn
		resumed, err = client.CallFor[*proto.SessionResumed](ctx, conn, &proto.SessionResume{SessionID: id, MaxTurns: 1})
		if errors.As(err, &re) && re.Code == proto.ErrSessionBusy {
			return &exitError{code: ExitFailure, msg: fmt.Sprintf("session %s is open in a client (%s); undo it there with /undo, or close it and run scv undo again", termtext.Line(id), termtext.Line(re.Message))}
		}
	}
	if err != nil {
		return fmt.Errorf("open session %s: %w", termtext.Line(id), err)
	}
	id = resumed.SessionID // --session may be a prefix
	defer func() {
		_, _ = client.CallFor[*proto.SessionClosed](context.WithoutCancel(ctx), conn, &proto.SessionClose{SessionID: id})
	}()
	plan, err := client.CallFor[*proto.SessionUndone](ctx, conn, &proto.SessionUndo{SessionID: id, DryRun: true})
	if err != nil {
		return undoErr(err)
	}
	out := g.stdio.Err
	fmt.Fprintf(out, "scv: undo turn %s of session %s:\n", termtext.Line(plan.TurnID), termtext.Line(id))
	printUndoFiles(out, plan.Files)
	fmt.Fprintf(out, "scv: note: %s\n", termtext.Line(plan.Note))
	if !r.yes {
		fmt.Fprint(out, "scv: undo these changes? [y/N] ")
		line, _ := bufio.NewReader(g.stdio.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(out, "scv: nothing was changed")
			return exitCode(ExitFailure)
		}
	}
	done, err := client.CallFor[*proto.SessionUndone](ctx, conn, &proto.SessionUndo{SessionID: id})
	if err != nil {
		return undoErr(err)
	}
	for _, f := range done.Files {
		verb := "restored"
		if f.Action == proto.UndoRemove {
			verb = "removed"
		}
		fmt.Fprintf(g.stdio.Out, "%s %s\n", verb, termtext.Line(f.Path))
	}
	return nil
}

func undoErr(err error) error {
	var re *client.RequestError
	if errors.As(err, &re) && re.Code == proto.ErrUndoRefused {
		return &exitError{code: ExitFailure, msg: "undo refused: " + termtext.Line(re.Message)}
	}
	return fmt.Errorf("undo: %w", err)
}

func printUndoFiles(w io.Writer, files []proto.UndoFile) {
	for _, f := range files {
		fmt.Fprintf(w, "scv:   %s %s\n", termtext.Line(f.Action), termtext.Line(f.Path))
		printDiff(w, f.Diff)
	}
}

// stdinTerminal says r is a terminal (an *os.File on a tty).
func stdinTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
