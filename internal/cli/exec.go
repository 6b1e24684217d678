package cli

import (
	"context"
	"encoding/json"

	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/version"
)

func newExecCmd(g *globals) *cobra.Command {
	var yes, jsonOut bool
	var workspace string
	cmd := &cobra.Command{
		Use:   "exec [--yes] [--json] PROMPT|-",
		Short: "Run one headless turn through a private `scv server --stdio`",
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
			// Fail early, with the config's own message, before a child starts.
			a, _, _, err := g.newApp(g.stderrLogger(), false)
			if err != nil {
				return err
			}
			loaded, err := a.LoadConfig(ws, noOverrides)
			if err != nil {
				return err
			}
			if _, err := loaded.Config.APIKey(g.env); err != nil {
				return err
			}
			return g.runExec(prompt, ws, yes, jsonOut)
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

// globalArgs are the global flags a child scv process needs, with home and
// config as given (the caller decides whether they must be absolute).
func (g *globals) globalArgs(home, config string) []string {
	var a []string
	for _, f := range [][2]string{{"--scv-home", home}, {"--config", config}, {"--model", g.model},
		{"--provider", g.provider}, {"--base-url", g.baseURL}, {"--approval-policy", g.approvalPolicy}} {
		if f[1] != "" {
			a = append(a, f[0], f[1])
		}
	}
	return a
}

// serverArgs runs the private server of exec in the caller's directory, so
// the flags pass on unchanged.
func (g *globals) serverArgs() []string {
	return append(g.globalArgs(g.scvHome, g.configPath), "server", "--stdio")
}

func (g *globals) runExec(prompt, ws string, yes, jsonOut bool) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate scv: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	child := exec.CommandContext(ctx, self, g.serverArgs()...)
	child.Env = envList(g.env)
	child.Stderr = g.stdio.Err
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	child.Cancel = func() error { return child.Process.Signal(syscall.SIGTERM) }
	child.WaitDelay = 5 * time.Second
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return fmt.Errorf("start scv server: %w", err)
	}
	conn := client.NewConn(stdout, stdin)
	code := g.execTurn(conn, prompt, ws, yes, jsonOut)
	conn.Close()
	stdin.Close()
	waitErr := make(chan error, 1)
	go func() { waitErr <- child.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(10 * time.Second):
		cancel()
		<-waitErr
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
		printJSON(g.stdio.Out, started)
	}
	if err := conn.Send(&proto.TurnStart{Envelope: proto.Envelope{Type: proto.TypeTurnStart, RequestID: execTurnRequest}, SessionID: sid, Prompt: prompt}); err != nil {
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
			_ = conn.Send(&proto.TurnCancel{Envelope: proto.Envelope{Type: proto.TypeTurnCancel}, SessionID: sid, TurnID: t.turnID})
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
		printJSON(out, ev)
	}
	switch ev.Type {
	case proto.EventTurnStarted:
		t.turnID = ev.TurnID
	case proto.EventAssistantDelta:
		if !t.jsonOut && ev.Content != nil {
			text := *ev.Content
			if t.visibleOut {
				text = termtext.Block(text)
			}
			fmt.Fprint(out, text)
			t.endedWithText = strings.HasSuffix(*ev.Content, "\n")
		}
	case proto.EventAssistantReasoning:
		// Reasoning is not the answer: never on stdout (--json shows it).
	case proto.EventAssistantComplete:
		if !t.jsonOut && ev.Content != nil && *ev.Content != "" && !t.endedWithText {
			fmt.Fprintln(out)
			t.endedWithText = true
		}
	case proto.EventApprovalRequested:
		if t.asked == nil {
			t.asked = map[string]bool{}
		}
		t.asked[ev.CallID] = true
		verdict := "denied (pass --yes to approve)"
		if t.yes {
			verdict = "approved (--yes)"
		}
		// The whole summary is printed, control characters made visible,
		// so what --yes approves is on record in full.
		fmt.Fprintf(errw, "scv: approval for %s (risk %s): %s\n", termtext.Line(ev.Name), termtext.Line(ev.Risk), verdict)
		for _, l := range strings.Split(strings.Trim(termtext.Block(ev.Summary), "\n"), "\n") {
			fmt.Fprintf(errw, "scv:   | %s\n", l)
		}
		_ = t.conn.Send(&proto.ApprovalResolve{Envelope: proto.Envelope{Type: proto.TypeApprovalSolve}, SessionID: t.sid, ApprovalID: ev.ApprovalID, Approved: t.yes})
	case proto.EventToolStarted:
		// Progress for long runs: which call is running now. A call that
		// ran without an approval note gets its whole summary (a fetch's
		// full URL) here.
		lines := strings.Split(strings.Trim(termtext.Block(ev.Summary), "\n"), "\n")
		if t.asked[ev.CallID] || ev.Summary == "" {
			fmt.Fprintf(errw, "scv: running %s\n", termtext.Line(ev.Name))
			break
		}
		fmt.Fprintf(errw, "scv: running %s: %s\n", termtext.Line(ev.Name), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(errw, "scv:   | %s\n", l)
		}
	case proto.EventToolCompleted:
		if ev.Success != nil && !*ev.Success && ev.Output != nil {
			fmt.Fprintf(errw, "scv: %s %s: %s\n", termtext.Line(ev.Name), termtext.Line(ev.Error), termtext.Line(clip(firstLine(*ev.Output), 300)))
		}
	case proto.EventTurnCompleted:
		return ExitOK, true
	case proto.EventTurnCancelled:
		fmt.Fprintln(errw, "scv: turn cancelled")
		return ExitFailure, true
	case proto.EventTurnFailed:
		fmt.Fprintf(errw, "turn failed (%s): %s\n", termtext.Line(ev.Code), termtext.Line(ev.Message))
		return ExitFailure, true
	case proto.EventError:
		fmt.Fprintf(errw, "scv: %s: %s\n", termtext.Line(ev.Code), termtext.Line(ev.Message))
		if (ev.Fatal != nil && *ev.Fatal) || ev.RequestID == execTurnRequest {
			return ExitFailure, true
		}
	}
	return 0, false
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

func envList(env Env) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
