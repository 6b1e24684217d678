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
	var yes, jsonOut bool
	var workspace string
	cmd := &cobra.Command{
		Use:   "exec [--yes] [--json] PROMPT|-",
		Short: "Run one headless turn (the server runs inside this process)",
		Long: "Run one turn and print the assistant's text as it streams; notes (approvals, running tools, tool failures) go to stderr.\n" +
			"Approvals are answered yes with --yes and no without it. --json prints every protocol event instead.\n" +
			"PROMPT '-' or no PROMPT reads the prompt from stdin. Exit 0 when the turn completes, 1 otherwise.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			a, _, tr, err := g.newApp(logger, true)
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
			return g.runExec(newServer(a, logger, &loaded.Config, nil, nil), prompt, ws, yes, jsonOut)
		},
	}
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
func (g *globals) runExec(srv *server.Server, prompt, ws string, yes, jsonOut bool) error {
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
	code := g.execTurn(conn, prompt, ws, yes, jsonOut)
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
func (g *globals) execTurn(conn *client.Conn, prompt, ws string, yes, jsonOut bool) int {
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, "scv-exec", version.Version); err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	started, err := conn.StartSession(ctx, proto.SessionStart{Cwd: ws})
	if err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	sid := started.SessionID
	if jsonOut {
		printEvent(g.stdio.Out, started)
	}
	if err := conn.Send(&proto.TurnStart{Envelope: proto.Envelope{RequestID: execTurnRequest}, SessionID: sid, Prompt: prompt}); err != nil {
		fmt.Fprintf(g.stdio.Err, "scv: %v\n", err)
		return ExitFailure
	}
	t := &execTurn{g: g, conn: conn, sid: sid, yes: yes, jsonOut: jsonOut, endedWithText: true, visibleOut: isTerminal(g.stdio.Out)}
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
	_ = t.conn.Send(&proto.ApprovalResolve{SessionID: t.sid, ApprovalID: e.ApprovalID, Approved: t.yes})
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
