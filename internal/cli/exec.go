package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/version"
)

func newExecCmd(g *globals) *cobra.Command {
	var yes, jsonOut, cont bool
	var workspace, resume string
	cmd := &cobra.Command{
		Use:   "exec [--yes] [--json] [--continue|--resume ID] PROMPT|-",
		Short: "Run one headless turn (the server runs inside this process)",
		Long: "Run one turn and print the assistant's text as it streams; notes (approvals, running tools, tool failures) go to stderr.\n" +
			"Approvals are answered yes with --yes and no without it. --json prints every protocol event instead.\n" +
			"PROMPT '-' or no PROMPT reads the prompt from stdin. Exit 0 when the turn completes, 1 otherwise.\n" +
			"Every run is saved as a session (scv sessions list); --continue adds the turn to the last session of the\n" +
			"workspace, --resume ID to session ID.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cont && resume != "" {
				return usageErr("--continue and --resume name the session two ways; pass one")
			}
			prompt, err := g.readPrompt(args)
			if err != nil {
				return err
			}
			ws, err := workspaceDir(workspace)
			if err != nil {
				return err
			}
			logger := g.stderrLogger()
			// Fail early, with the config's own message, before anything runs.
			a, layout, tr, err := g.newApp(logger, true)
			if err != nil {
				return err
			}
			// The app owns the MCP servers the turn starts; closing it
			// stops them (and what they spawned) before exec exits.
			defer a.Close()
			loaded, err := a.LoadConfig(ws, app.NoOverrides)
			if err != nil {
				return err
			}
			if _, err := loaded.Config.APIKey(g.env); err != nil {
				return err
			}
			// Like every server, stop what dead owners left behind first.
			if n, err := tr.Reconcile(g.ctx); err != nil {
				logger.Warn("reconcile delegations", "err", err)
			} else if n > 0 {
				logger.Info("stopped orphaned delegations", "count", n)
			}
			st, err := openStore(g.ctx, layout, "scv exec", logger)
			if err != nil {
				return err
			}
			defer closeStore(st, logger)
			srv := newServer(a, logger, &loaded.Config, st, "scv exec", nil, nil)
			return g.runExec(srv, execRun{prompt: prompt, ws: ws, yes: yes, jsonOut: jsonOut, cont: cont, resume: resume})
		},
	}
	cmd.Flags().BoolVar(&cont, "continue", false, "add the turn to the last session of the workspace")
	cmd.Flags().StringVar(&resume, "resume", "", "add the turn to session ID (scv sessions list shows the ids)")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve every approval request")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print every protocol event as a JSON line")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: current directory)")
	return cmd
}

func (g *globals) readPrompt(args []string) (string, error) {
	if len(args) == 1 && args[0] != "-" {
		return args[0], nil
	}
	b, err := io.ReadAll(io.LimitReader(g.stdio.In, proto.MaxPromptBytes+1))
	if err != nil {
		return "", usageErr("read prompt from stdin: %v", err)
	}
	p := strings.TrimRight(string(b), "\n")
	if strings.TrimSpace(p) == "" {
		return "", usageErr("empty prompt: pass PROMPT or pipe it on stdin")
	}
	return p, nil
}

// runExec serves the protocol in this process over two in-memory pipes and
// drives one turn through them as a client, exactly as it would a separate
// `scv server --stdio` (docs/runtime.md says why there is no child).
// execRun is what one `scv exec` does.
type execRun struct {
	prompt, ws   string
	yes, jsonOut bool
	// cont continues the workspace's last session, resume names one.
	cont   bool
	resume string
}

func (g *globals) runExec(srv *server.Server, r execRun) error {
	// The server gets its own context: Ctrl+C is answered with turn.cancel
	// through the protocol, not by tearing the server down under the turn.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(ctx, toServer, fromServer)
		fromServer.Close() // the client's reader sees EOF
		toServer.Close()   // and the server's reader ends
	}()
	conn := client.NewConn(toClient, fromClient)
	code := g.execTurn(conn, r)
	conn.Close() // EOF for the server: it cancels what still runs and returns
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		cancel()
		<-served
	}
	if code != ExitOK {
		return exitCode(code)
	}
	return nil
}

// execTurn drives one turn and returns the exit status.
func (g *globals) execTurn(conn *client.Conn, r execRun) int {
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, "scv-exec", version.Version); err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	opened, sid, err := openExecSession(ctx, conn, r)
	if err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	if r.jsonOut {
		printEvent(g.stdio.Out, opened)
	}
	if err := conn.Send(&proto.TurnStart{Envelope: proto.Envelope{RequestID: execTurnRequest}, SessionID: sid, Prompt: r.prompt}); err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	t := &execTurn{g: g, conn: conn, sid: sid, yes: r.yes, jsonOut: r.jsonOut, endedWithText: true, visibleOut: isTerminal(g.stdio.Out)}
	interrupted := g.ctx.Done()
	for {
		select {
		case <-interrupted:
			interrupted = nil
			if t.turnID == "" {
				fmt.Fprintln(g.stdio.Err, "scv: interrupted before the turn started")
				return ExitFailure
			}
			fmt.Fprintln(g.stdio.Err, "scv: interrupted; cancelling the turn")
			_ = conn.Send(&proto.TurnCancel{SessionID: sid, TurnID: t.turnID})
		case ev, ok := <-conn.Events():
			if !ok {
				fmt.Fprintf(g.stdio.Err, "scv: the server ended before the turn finished: %v\n", conn.Err())
				return ExitFailure
			}
			if code, done := t.handle(ev); done {
				return code
			}
		}
	}
}

// openExecSession starts exec's session, or resumes the one --continue or
// --resume names; it returns the event that opened it and its id.
func openExecSession(ctx context.Context, conn *client.Conn, r execRun) (proto.Event, string, error) {
	id := r.resume
	if r.cont {
		list, err := client.CallFor[*proto.SessionListed](ctx, conn, &proto.SessionList{Workspace: r.ws, Limit: 1})
		if err != nil {
			return nil, "", fmt.Errorf("find the last session of %s: %w", r.ws, err)
		}
		if len(list.Sessions) == 0 {
			return nil, "", fmt.Errorf("--continue: no earlier session in %s; run scv exec without it to start one", termtext.Line(r.ws))
		}
		id = list.Sessions[0].SessionID
	}
	if id == "" {
		started, err := conn.StartSession(ctx, proto.SessionStart{Cwd: r.ws, Origin: proto.OriginExec})
		if err != nil {
			return nil, "", err
		}
		return started, started.SessionID, nil
	}
	resumed, err := client.CallFor[*proto.SessionResumed](ctx, conn, &proto.SessionResume{SessionID: id, MaxTurns: 1})
	if err != nil {
		return nil, "", fmt.Errorf("resume session %s: %w", termtext.Line(id), err)
	}
	return resumed, resumed.SessionID, nil
}

// execTurnRequest is the request_id of exec's turn.start: an error that
// answers it means no turn will run.
const execTurnRequest = "exec-turn"

// execTurn is the client side of exec's one turn.
type execTurn struct {
	g             *globals
	conn          *client.Conn
	sid, turnID   string
	yes, jsonOut  bool
	endedWithText bool
	// visibleOut makes control characters of the assistant's text visible
	// on stdout; only when stdout is a terminal, since redirected output is
	// the turn's product and stays byte-exact.
	visibleOut bool
	// asked are the calls whose approval note (with the summary) was
	// printed.
	asked map[string]bool
}

// handle prints one event and answers approvals; done reports the end of
// the turn with its exit status.
func (t *execTurn) handle(ev proto.Event) (code int, done bool) {
	out, errw := t.g.stdio.Out, t.g.stdio.Err
	if t.jsonOut {
		printEvent(out, ev)
	}
	switch e := ev.(type) {
	case *proto.TurnStarted:
		t.turnID = e.TurnID
	case *proto.AssistantDelta:
		if !t.jsonOut {
			text := e.Content
			if t.visibleOut {
				text = termtext.Block(text)
			}
			fmt.Fprint(out, text)
			t.endedWithText = strings.HasSuffix(e.Content, "\n")
		}
	case *proto.AssistantReasoning:
		// Reasoning is not the answer: never on stdout (--json shows it).
	case *proto.AssistantCompleted:
		if !t.jsonOut && e.Content != "" && !t.endedWithText {
			fmt.Fprintln(out)
			t.endedWithText = true
		}
	case *proto.ApprovalRequested:
		t.approve(e)
	case *proto.ToolStarted:
		// Progress for long runs: which call is running now. A call that
		// ran without an approval note gets its whole summary (a fetch's
		// full URL) here.
		lines := strings.Split(strings.Trim(termtext.Block(e.Summary), "\n"), "\n")
		if t.asked[e.CallID] || e.Summary == "" {
			fmt.Fprintf(errw, "scv: running %s\n", termtext.Line(e.Name))
			break
		}
		fmt.Fprintf(errw, "scv: running %s: %s\n", termtext.Line(e.Name), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(errw, "scv:   | %s\n", l)
		}
	case *proto.ToolCompleted:
		if !e.Success {
			fmt.Fprintf(errw, "scv: %s %s: %s\n", termtext.Line(e.Name), termtext.Line(e.Error), termtext.Line(clip(firstLine(e.Output), 300)))
		}
	case *proto.TurnCompleted:
		return ExitOK, true
	case *proto.TurnCancelled:
		fmt.Fprintln(errw, "scv: turn cancelled")
		return ExitFailure, true
	case *proto.TurnFailed:
		fmt.Fprintf(errw, "turn failed (%s): %s\n", termtext.Line(e.Code), termtext.Line(e.Message))
		return ExitFailure, true
	case *proto.Error:
		fmt.Fprintf(errw, "scv: %s: %s\n", termtext.Line(e.Code), termtext.Line(e.Message))
		if e.Fatal || e.RequestID == execTurnRequest {
			return ExitFailure, true
		}
	}
	return 0, false
}

// approve answers an approval request as --yes says and notes it on stderr
// with the whole summary, control characters made visible, so what --yes
// approves is on record in full.
func (t *execTurn) approve(e *proto.ApprovalRequested) {
	if t.asked == nil {
		t.asked = map[string]bool{}
	}
	t.asked[e.CallID] = true
	verdict := "denied (pass --yes to approve)"
	if t.yes {
		verdict = "approved (--yes)"
	}
	errw := t.g.stdio.Err
	fmt.Fprintf(errw, "scv: approval for %s (risk %s): %s\n", termtext.Line(e.Name), termtext.Line(e.Risk), verdict)
	for _, l := range strings.Split(strings.Trim(termtext.Block(e.Summary), "\n"), "\n") {
		fmt.Fprintf(errw, "scv:   | %s\n", l)
	}
	printDiff(errw, e.Diff)
	_ = t.conn.Send(&proto.ApprovalResolve{SessionID: t.sid, ApprovalID: e.ApprovalID, Approved: t.yes})
}

// printDiff notes the planned change of a write under its approval: the
// bounded diff line by line, control characters made visible, and how
// many lines the server left out.
func printDiff(w io.Writer, d *proto.Diff) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "scv:   diff of %s: +%d -%d lines\n", termtext.Line(d.Path), d.Added, d.Removed)
	if d.Note != "" {
		fmt.Fprintf(w, "scv:   | (%s)\n", termtext.Line(d.Note))
	}
	if text := strings.TrimSuffix(d.Text, "\n"); text != "" {
		for _, l := range strings.Split(termtext.Block(text), "\n") {
			fmt.Fprintf(w, "scv:   | %s\n", l)
		}
	}
	if d.Omitted > 0 {
		fmt.Fprintf(w, "scv:   | … +%d more lines\n", d.Omitted)
	}
}

// isTerminal says w is a terminal (an *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func printJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		fmt.Fprintf(w, "%s\n", b)
	}
}

// printEvent writes ev as the server sent it, one JSON line.
func printEvent(w io.Writer, ev proto.Event) {
	if b, err := proto.EncodeEvent(ev); err == nil {
		fmt.Fprintf(w, "%s\n", b)
	}
}
