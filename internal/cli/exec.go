package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/version"
)

func newExecCmd(g *globals) *cobra.Command {
	var r execRun
	var workspace string
	cmd := &cobra.Command{
		Use:   "exec [--yes] [--allow RULE]… [--max-steps N] [-i FILE]… [--plan] [--json] [--quiet|--verbose] [--continue|--resume ID] PROMPT|-",
		Short: "Run one headless turn (the server runs inside this process)",
		Long: "Run one turn and print the assistant's text as it streams; notes (approvals, running tools, tool failures,\n" +
			"provider retries) go to stderr, one line each, prefixed \"scv:\". Approvals are answered yes with --yes and no\n" +
			"without it; --allow RULE lets the calls a rule covers run without asking for this run (never a write to a\n" +
			"guarded path such as .git/ or .envrc). --json prints every protocol event on stdout instead, and every error\n" +
			"as an error event too.\n" +
			"--quiet prints nothing on stderr but fatal errors; --verbose adds the output of bash calls, the live\n" +
			"progress of other calls (what a delegated agent runs, edits and says) and the changes of the model's\n" +
			"todo list to stderr. --plan runs the turn in plan mode: only read-only tools run, and the\n" +
			"answer is the model's plan in Markdown; without --plan a resumed session leaves plan mode.\n" +
			"PROMPT '-' or no PROMPT reads the prompt from stdin. -i FILE sends an image (PNG, JPEG, GIF or WebP, at most\n" +
			"8 MiB) with the prompt; the session keeps its path and hash, not its bytes. Every run is saved as a session\n" +
			"(scv sessions list); --continue adds the turn to the last session of the workspace, --resume ID to session ID.\n\n" +
			"Exit status: 0 answered; 1 failed (the turn failed or was cancelled, or scv could not start it);\n" +
			"2 usage error; 3 answered, but one or more tool calls were denied; 130 interrupted (Ctrl+C, SIGTERM).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules, err := r.parse(g, args, workspace, cmd.Flags().Changed("max-steps"))
			if err != nil {
				return err
			}
			return g.startExec(r, rules)
		},
	}
	addExecFlags(cmd, g, &r, &workspace)
	return cmd
}

// addExecFlags declares exec's flags into r, g.execJSON and workspace.
func addExecFlags(cmd *cobra.Command, g *globals, r *execRun, workspace *string) {
	cmd.Flags().BoolVar(&r.cont, "continue", false, "add the turn to the last session of the workspace")
	cmd.Flags().StringVar(&r.resume, "resume", "", "add the turn to session ID (scv sessions list shows the ids)")
	cmd.Flags().BoolVar(&r.yes, "yes", false, "approve every approval request")
	cmd.Flags().BoolVar(&g.execJSON, "json", false, "print every protocol event (and every error) as a JSON line")
	cmd.Flags().BoolVar(&r.quiet, "quiet", false, "print only the answer: nothing on stderr but fatal errors")
	cmd.Flags().BoolVar(&r.verbose, "verbose", false, "also print the output of each bash call on stderr when it ends, and the progress of other calls as it comes")
	cmd.Flags().StringVar(workspace, "workspace", "", "workspace directory (default: current directory)")
	cmd.Flags().StringArrayVar(&r.allow, "allow", nil, "allow calls without asking for this run; `RULE` is bash:PREFIX (commands starting with PREFIX), write or write:DIR/ (writes, guarded paths excepted), web_fetch:HOST, or a tool name; repeatable")
	cmd.Flags().StringArrayVarP(&r.images, "image", "i", nil, "send the image `FILE` (PNG, JPEG, GIF or WebP by content, at most 8 MiB) with the prompt; repeatable")
	cmd.Flags().BoolVar(&r.plan, "plan", false, "run the turn in plan mode: only read-only tools run, and the model answers with a plan")
	cmd.Flags().IntVar(&r.maxSteps, "max-steps", 0, "cap the turn at `N` model requests (default: agent.max_steps)")
}

// parse checks exec's flags and arguments into r (the prompt, the images,
// the workspace) in the order their errors are reported, and returns the
// --allow rules; maxStepsSet says --max-steps was given.
func (r *execRun) parse(g *globals, args []string, workspace string, maxStepsSet bool) ([]approval.Grant, error) {
	if r.cont && r.resume != "" {
		return nil, usageErr("--continue and --resume name the session two ways; pass one")
	}
	if r.quiet && r.verbose {
		return nil, usageErr("--quiet and --verbose contradict each other; pass one")
	}
	prompt, err := g.readPrompt(args)
	if err != nil {
		return nil, err
	}
	r.prompt = prompt
	if r.imagePaths, err = checkImages(r.images); err != nil {
		return nil, err
	}
	if r.ws, err = workspaceDir(workspace); err != nil {
		return nil, startupErr(execWorkspaceError, err)
	}
	rules, err := allowRules(r.allow)
	if err != nil {
		return nil, err
	}
	if maxStepsSet && r.maxSteps < 1 {
		return nil, usageErr("--max-steps %d: give at least 1 (the number of model requests the turn may make)", r.maxSteps)
	}
	return rules, nil
}

// startExec builds the app, checks the configuration and the key, stops
// orphaned delegations, opens the store and runs the turn in an in-process
// server.
func (g *globals) startExec(r execRun, rules []approval.Grant) error {
	logger := g.consoleLogger(r.quiet)
	// The database opens while the app is built and the configuration
	// read and checked: it is the longest step before the first request.
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return startupErr(execConfigError, err)
	}
	aside := openServerAside(g.ctx, layout, "scv exec", true, logger)
	defer aside.discard()
	// Fail early, with the config's own message, before anything runs.
	a, _, tr, err := g.newAppWith(logger, true, func(o *app.Options) { o.Allow, o.MaxSteps = rules, r.maxSteps })
	if err != nil {
		return startupErr(execConfigError, err)
	}
	// The app owns the MCP servers the turn starts; closing it
	// stops them (and what they spawned) before exec exits.
	defer a.Close()
	if r.verbose {
		fmt.Fprintf(g.stdio.Err, "scv: process tracking: %s\n", termtext.Line(a.Contain().Describe()))
	}
	loaded, err := a.LoadConfig(r.ws, app.NoOverrides)
	if err != nil {
		return startupErr(execConfigError, err)
	}
	a.WarmForSession(&loaded.Config)
	if _, err := loaded.Config.APIKey(g.env); err != nil {
		return startupErr(execNoAPIKey, err)
	}
	if limit := loaded.Config.Session.MaxPromptBytes; len(r.prompt) > limit {
		return usageErr("%s", promptTooLong(len(r.prompt), limit))
	}
	// Like every server, stop what dead owners left behind first.
	reconcileAtStart(g.ctx, tr, a.Contain(), logger)
	// The server is built while the database may still be opening: the
	// new session starts in memory meanwhile, and the turn waits for it.
	srv, stop, err := aside.serve(a, &loaded.Config)
	if err != nil {
		return startupErr(execStoreError, err)
	}
	defer stop()
	r.storeReady = aside.ready
	// The user's explicit settings go with the session like the
	// TUI's, so a resumed session keeps its stored endpoint unless
	// they name another; the key stays this process's own.
	r.over = g.sessionPicks()
	return g.runExec(srv, r)
}

// allowRules parses the --allow values into the rules the session starts
// with, built as a saved allow rule is (approval.Spec): bash takes a
// command prefix, write a path (the whole workspace without one), web_fetch
// a domain, any other tool is allowed whole.
func allowRules(values []string) ([]approval.Grant, error) {
	var out []approval.Grant
	for _, v := range values {
		toolName, scope, scoped := strings.Cut(strings.TrimSpace(v), ":")
		s := approval.Spec{Tool: toolName, Source: "--allow"}
		var err error
		switch {
		case toolName == "bash":
			s.Prefix = scope
		case toolName == "write":
			s.Path = scope
		case toolName == "web_fetch" && scoped:
			s.Domain = scope
		case scoped:
			err = fmt.Errorf("only bash takes a command prefix and write a path (web_fetch a domain); allow %s whole with --allow %s", toolName, toolName)
		}
		var g approval.Grant
		if err == nil {
			g, err = s.Rule()
		}
		if err != nil {
			return nil, usageErr("--allow %q: %v", v, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// Codes of the error events scv exec --json prints for errors of its own
// (docs/runtime.md §9); errors of the server keep the
// protocol's codes.
const (
	execUsageError     = "usage_error"     // bad flags or arguments, a prompt over the limit
	execConfigError    = "config_error"    // the configuration does not load
	execNoAPIKey       = "api_key_missing" // the provider's key variable is not set
	execWorkspaceError = "workspace_error" // the workspace is missing or not a directory
	execStoreError     = "store_error"     // the session database cannot be opened
	execStartupError   = "startup_error"   // anything else before the turn started
	execConnectionLost = "connection_lost" // the in-process server ended mid-turn
	execInterrupted    = "interrupted"     // Ctrl+C or SIGTERM
)

// promptTooLong says a prompt is over the limit, with both sizes.
func promptTooLong(size, limit int) string {
	return fmt.Sprintf("the prompt is %d bytes, over the limit of %d (session.max_prompt_bytes); shorten it or raise the limit", size, limit)
}

// maxCountedPrompt is how far a prompt on stdin over the largest limit
// is counted to name its size.
const maxCountedPrompt = 1 << 30

// readPrompt is the prompt argument, or stdin for "-" or none. Stdin is
// read whole (past the largest limit it is only counted), so a prompt over
// the limit is refused with its real size.
func (g *globals) readPrompt(args []string) (string, error) {
	if len(args) == 1 && args[0] != "-" {
		if strings.TrimSpace(args[0]) == "" {
			return "", usageErr("empty prompt: pass the text to send as PROMPT, or - (or nothing) to read it from stdin")
		}
		return args[0], nil
	}
	b, err := io.ReadAll(io.LimitReader(g.stdio.In, config.MaxPromptBytesLimit+1))
	if err != nil {
		return "", usageErr("read prompt from stdin: %v", err)
	}
	if len(b) > config.MaxPromptBytesLimit {
		// Counted up to 1 GiB, so an endless stdin still ends.
		rest, err := io.CopyN(io.Discard, g.stdio.In, maxCountedPrompt-int64(len(b)))
		if err != nil && err != io.EOF {
			return "", usageErr("read prompt from stdin: %v", err)
		}
		size := fmt.Sprintf("%d bytes", int64(len(b))+rest)
		if err == nil {
			size = fmt.Sprintf("more than %d bytes", maxCountedPrompt)
		}
		return "", usageErr("the prompt on stdin is %s, over the largest limit of %d (session.max_prompt_bytes); shorten it", size, config.MaxPromptBytesLimit)
	}
	p := strings.TrimRight(string(b), "\n")
	if strings.TrimSpace(p) == "" {
		return "", usageErr("empty prompt on stdin: pipe the text to send, or pass it as PROMPT")
	}
	return p, nil
}

// execRun is what one `scv exec` does.
type execRun struct {
	prompt, ws string
	yes        bool
	// quiet keeps stderr for fatal errors; verbose adds bash output.
	quiet, verbose bool
	// cont continues the workspace's last session, resume names one.
	cont   bool
	resume string
	// allow are the --allow values; maxSteps is --max-steps (0: the
	// configuration's).
	allow    []string
	maxSteps int
	// images are the -i values; imagePaths the files they name, absolute
	// and checked.
	images, imagePaths []string
	// plan runs the turn in plan mode (--plan).
	plan bool
	// over are the user's explicit session overrides (flags, SCV_*).
	over proto.SessionStart
	// storeReady waits for the session database to be open: a database
	// that cannot be is a start-up failure (store_error), reported before
	// any turn.
	storeReady func(context.Context) error
}

// runExec serves the protocol in this process over two in-memory pipes and
// drives one turn through them as a client, exactly as it would a separate
// `scv server --stdio` (docs/runtime.md says why there is no child).
func (g *globals) runExec(srv *server.Server, r execRun) error {
	var code int
	serveInProcess(srv, func(conn *client.Conn) { code = g.execTurn(conn, r) })
	if code != ExitOK {
		return exitCode(code)
	}
	return nil
}

// execTurn drives one turn and returns the exit status.
func (g *globals) execTurn(conn *client.Conn, r execRun) int {
	ctx := context.Background()
	t := &execTurn{g: g, conn: conn, r: r, jsonOut: g.execJSON, endedWithText: true, answer: g.productOut()}
	if _, err := conn.Initialize(ctx, "scv-exec", version.Version); err != nil {
		return t.fail(execStartupError, err.Error())
	}
	if r.cont || r.resume != "" {
		if code, failed := t.storeFailed(ctx); failed {
			return code // the session to open is in the database
		}
	}
	opened, sid, err := openExecSession(ctx, conn, r)
	if err != nil {
		return t.fail(execStartupError, err.Error())
	}
	if code, failed := t.storeFailed(ctx); failed {
		return code
	}
	t.sid = sid
	if t.jsonOut {
		printEvent(g.stdio.Out, opened)
	}
	_, resumed := opened.(*proto.SessionResumed)
	if e, ok := opened.(*proto.SessionResumed); ok && e.PreviousBaseURL != "" {
		t.note("endpoint changed: %s → %s", termtext.Line(e.PreviousBaseURL), termtext.Line(e.BaseURL))
	}
	if r.plan || resumed {
		// The mode is this run's: --plan, or the default mode for a
		// resumed session that was left in plan mode.
		mode := proto.ModeDefault
		if r.plan {
			mode = proto.ModePlan
		}
		if _, err := client.CallFor[*proto.SessionMode](ctx, conn, &proto.SessionSetMode{SessionID: sid, Mode: mode}); err != nil {
			return t.fail(execStartupError, fmt.Sprintf("set the session's mode: %v", err))
		}
	}
	var code int
	end, err := client.RunTurn(g.ctx, conn, client.Turn{
		Start: proto.TurnStart{Envelope: proto.Envelope{RequestID: execTurnRequest}, SessionID: sid, Prompt: r.prompt, Images: protoImageRefs(r.imagePaths)},
		On:    func(ev proto.Event) { code, _ = t.handle(ev) },
		OnCancel: func() {
			t.interrupted = true
			t.note("interrupted; cancelling the turn")
		},
	})
	switch {
	case end != nil:
		return code
	case errors.Is(err, client.ErrNotStarted):
		return t.fail(execInterrupted, err.Error())
	case errors.Is(err, client.ErrCancelTimeout):
		return t.fail(execInterrupted, err.Error())
	}
	return t.fail(execConnectionLost, fmt.Sprintf("the server ended before the turn finished: %v", conn.Err()))
}

// openExecSession starts exec's session, or resumes the one --continue or
// --resume names; it returns the event that opened it and its id.
func openExecSession(ctx context.Context, conn *client.Conn, r execRun) (proto.Event, string, error) {
	id := r.resume
	if r.cont {
		list, err := client.CallFor[*proto.SessionListed](ctx, conn, &proto.SessionList{Workspace: r.ws, Limit: 1, All: true})
		if err != nil {
			return nil, "", fmt.Errorf("find the last session of %s: %w", r.ws, err)
		}
		if len(list.Sessions) == 0 {
			return nil, "", fmt.Errorf("--continue: no earlier session in %s; run scv exec without it to start one", termtext.Line(r.ws))
		}
		id = list.Sessions[0].SessionID
	}
	if id == "" {
		start := r.over
		start.Cwd, start.Origin = r.ws, proto.OriginExec
		started, err := conn.StartSession(ctx, start)
		if err != nil {
			return nil, "", err
		}
		return started, started.SessionID, nil
	}
	resumed, err := client.CallFor[*proto.SessionResumed](ctx, conn, &proto.SessionResume{SessionID: id, MaxTurns: 1,
		Provider: r.over.Provider, Model: r.over.Model, BaseURL: r.over.BaseURL})
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
	r             execRun
	sid, turnID   string
	jsonOut       bool
	endedWithText bool
	// answer is where the assistant's text goes: stdout made visible on a
	// terminal; redirected, it is the turn's product and stays byte-exact.
	answer io.Writer
	// asked are the calls whose approval note (with the summary) was
	// printed; deniedNoted those whose denial that note already reported.
	asked, deniedNoted map[string]bool
	// denied counts the calls that were denied: the turn then answers
	// with ExitDenied.
	denied int
	// interrupted: Ctrl+C (or SIGTERM) arrived; the turn ends with
	// ExitInterrupted.
	interrupted bool
	// todos is the last todo list seen (--verbose notes its changes).
	todos []proto.TodoItem
	// names are the tools of the calls started, by call id.
	names map[string]string
}

// note writes one "scv:" line on stderr unless --quiet.
func (t *execTurn) note(format string, args ...any) {
	if !t.r.quiet {
		fmt.Fprintf(t.g.stdio.Err, "scv: "+format+"\n", args...)
	}
}

// storeFailed waits for the session database and reports, as a start-up
// failure, that it could not be opened.
func (t *execTurn) storeFailed(ctx context.Context) (int, bool) {
	if t.r.storeReady == nil {
		return 0, false
	}
	if err := t.r.storeReady(ctx); err != nil {
		return t.fail(execStoreError, err.Error()), true
	}
	return 0, false
}

// fail reports a fatal error once on stderr (even with --quiet) and, with
// --json, as an error event on stdout; it returns the exit status of code.
func (t *execTurn) fail(code, msg string) int {
	fmt.Fprintf(t.g.stdio.Err, "scv: %s\n", termtext.Line(msg))
	if t.jsonOut {
		printEvent(t.g.stdio.Out, &proto.Error{Header: proto.Header{Type: proto.EventError}, Code: code, Message: msg, Fatal: true})
	}
	if code == execInterrupted {
		return ExitInterrupted
	}
	return ExitFailure
}

// ended is the exit status of a turn that ended with turn.completed.
func (t *execTurn) ended() int {
	switch {
	case t.interrupted:
		return ExitInterrupted
	case t.denied > 0:
		return ExitDenied
	}
	return ExitOK
}

// handle prints one event and answers approvals; done reports the end of
// the turn with its exit status.
func (t *execTurn) handle(ev proto.Event) (code int, done bool) {
	out := t.g.stdio.Out
	if t.jsonOut {
		printEvent(out, ev)
	}
	switch e := ev.(type) {
	case *proto.TurnStarted:
		t.turnID = e.TurnID
		for _, m := range e.Mentions {
			t.note("%s", mentionNote(m))
		}
	case *proto.AssistantDelta:
		if !t.jsonOut {
			fmt.Fprint(t.answer, e.Content)
			t.endedWithText = strings.HasSuffix(e.Content, "\n")
		}
	case *proto.AssistantReasoning:
		// Reasoning is not the answer: never on stdout (--json shows it).
	case *proto.AssistantCompleted:
		if !t.jsonOut && e.Content != "" && !t.endedWithText {
			fmt.Fprintln(t.answer)
			t.endedWithText = true
		}
	case *proto.ApprovalRequested:
		t.approve(e)
	case *proto.ToolStarted:
		t.started(e)
	case *proto.ToolProgress:
		// --verbose prints a bash call's whole output once, when it ends
		// (a progress line would print a line of it twice); the progress
		// of the other calls (a delegated agent's steps) is printed as it
		// comes.
		if t.r.verbose && t.names[e.CallID] != "bash" {
			t.note("  ~ %s", termtext.Line(e.Text))
		}
	case *proto.ToolCompleted:
		t.completed(e)
	case *proto.TodoUpdated:
		if t.r.verbose {
			t.todoChanges(e.Items)
		}
	case *proto.HookRan:
		t.hookRan(e)
	case *proto.TurnCompleted:
		if e.NotStored {
			// Said even with --quiet: the run did not do what it promises.
			fmt.Fprintln(t.g.stdio.Err, "scv: the turn was not saved: the session database is gone (scv sessions list will not show it)")
		}
		return t.ended(), true
	case *proto.TurnCancelled:
		if t.interrupted {
			t.note("turn cancelled")
			return ExitInterrupted, true
		}
		fmt.Fprintln(t.g.stdio.Err, "scv: turn cancelled")
		return ExitFailure, true
	case *proto.TurnFailed:
		fmt.Fprintf(t.g.stdio.Err, "scv: turn failed (%s): %s\n", termtext.Line(e.Code), termtext.Line(e.Message))
		if t.interrupted {
			return ExitInterrupted, true
		}
		return ExitFailure, true
	case *proto.Error:
		if e.Fatal || e.RequestID == execTurnRequest {
			// Already on stdout with --json: only stderr here.
			fmt.Fprintf(t.g.stdio.Err, "scv: %s: %s\n", termtext.Line(e.Code), termtext.Line(e.Message))
			return ExitFailure, true
		}
		t.note("%s: %s", termtext.Line(e.Code), termtext.Line(e.Message))
	}
	return 0, false
}

// hookRan notes a hook that ran. A failed hook is always said; what the
// others decided shows in the call's or the turn's own lines, and with
// --verbose here.
func (t *execTurn) hookRan(e *proto.HookRan) {
	switch {
	case e.Outcome == proto.HookFailed:
		t.note("hook %s (%s) failed: %s", termtext.Line(e.Hook), termtext.Line(e.Event), termtext.Line(clip(e.Reason, 300)))
		if e.Stderr != "" {
			t.note("  | %s", termtext.Line(clip(lastLine(e.Stderr), 300)))
		}
	case t.r.verbose:
		t.note("hook %s (%s): %s %d ms", termtext.Line(e.Hook), termtext.Line(e.Event), termtext.Line(e.Outcome), e.DurationMS)
	}
}

// started notes a call that runs now (progress for long runs). A call that
// ran without an approval note gets its whole summary (a fetch's full URL)
// here.
func (t *execTurn) started(e *proto.ToolStarted) {
	if t.names == nil {
		t.names = map[string]string{}
	}
	t.names[e.CallID] = e.Name
	lines := strings.Split(strings.Trim(termtext.Block(e.Summary), "\n"), "\n")
	name := termtext.Line(e.Name)
	if e.GrantID != "" {
		// exec gives no session grants: a grant here is an --allow rule.
		name += " (allowed by --allow)"
	}
	if t.asked[e.CallID] || e.Summary == "" {
		t.note("running %s", name)
		return
	}
	t.note("running %s: %s", name, lines[0])
	for _, l := range lines[1:] {
		t.note("  | %s", l)
	}
}

// completed reports a failed or denied call once, and with --verbose a
// bash call's output.
func (t *execTurn) completed(e *proto.ToolCompleted) {
	name := termtext.Line(e.Name)
	if t.r.verbose && e.Name == "bash" {
		t.bashOutput(e.Output)
	}
	switch {
	case e.Success:
	case e.Error == proto.ToolDenied && strings.HasPrefix(e.Output, "plan mode: read-only"):
		// Plan mode's refusals are how --plan works, not denials.
		t.note("%s call not run: plan mode: read-only", name)
	case e.Error == proto.ToolDenied:
		t.denied++
		if t.deniedNoted[e.CallID] {
			return // the approval note said it
		}
		// The output is what the model reads ("denied: the approval
		// policy ..."); the line says "denied" once.
		why := strings.TrimPrefix(firstLine(e.Output), "denied: ")
		t.note("%s call denied: %s", name, termtext.Line(clip(why, 300)))
	default:
		t.note("%s call failed (%s): %s", name, termtext.Line(e.Error), termtext.Line(clip(firstLine(e.Output), 300)))
	}
}

// todoChanges notes the items of a new todo list that are new or changed
// status since the last list (--verbose), with the count done.
func (t *execTurn) todoChanges(items []proto.TodoItem) {
	before := map[string]string{}
	for _, it := range t.todos {
		before[it.Content] = it.Status
	}
	t.todos = items
	if len(items) == 0 {
		t.note("todo list cleared")
		return
	}
	done := 0
	for _, it := range items {
		if it.Status == proto.TodoCompleted {
			done++
		}
	}
	t.note("todo list: %d of %d completed", done, len(items))
	for _, it := range items {
		if st, ok := before[it.Content]; !ok || st != it.Status {
			t.note("  %s %s", todoMark(it.Status), termtext.Line(it.Content))
		}
	}
}

// todoMark is an item's status as a checkbox.
func todoMark(status string) string {
	switch status {
	case proto.TodoCompleted:
		return "[x]"
	case proto.TodoInProgress:
		return "[~]"
	}
	return "[ ]"
}

// approve answers an approval request as --yes says and notes it on stderr
// with the whole summary, control characters made visible, so what --yes
// approves is on record in full.
func (t *execTurn) approve(e *proto.ApprovalRequested) {
	if t.asked == nil {
		t.asked, t.deniedNoted = map[string]bool{}, map[string]bool{}
	}
	t.asked[e.CallID] = true
	verdict := "denied (pass --yes to approve)"
	if t.r.yes {
		verdict = "approved (--yes)"
	} else {
		t.deniedNoted[e.CallID] = true
	}
	if !t.r.quiet {
		errw := t.g.stdio.Err
		fmt.Fprintf(errw, "scv: approval for %s (risk %s): %s\n", termtext.Line(e.Name), termtext.Line(e.Risk), verdict)
		if e.Reason != "" {
			fmt.Fprintf(errw, "scv:   why: %s\n", termtext.Line(e.Reason))
		}
		for _, l := range strings.Split(strings.Trim(termtext.Block(e.Summary), "\n"), "\n") {
			fmt.Fprintf(errw, "scv:   | %s\n", l)
		}
		printDiff(errw, e.Diff)
	}
	_ = t.conn.Send(&proto.ApprovalResolve{SessionID: t.sid, ApprovalID: e.ApprovalID, Approved: t.r.yes})
}

// bashOutput notes a bash call's output line by line, control characters
// made visible, and its exit code when not 0 (--verbose).
func (t *execTurn) bashOutput(result string) {
	var r struct {
		ExitCode *int   `json:"exit_code"`
		TimedOut bool   `json:"timed_out"`
		Output   string `json:"output"`
	}
	if err := json.Unmarshal([]byte(result), &r); err != nil {
		r.Output = result // a failure's text, not a result object
	}
	if text := strings.TrimSuffix(r.Output, "\n"); text != "" {
		for _, l := range strings.Split(termtext.Block(text), "\n") {
			t.note("  | %s", l)
		}
	}
	switch {
	case r.TimedOut:
		t.note("  (timed out)")
	case r.ExitCode != nil && *r.ExitCode != 0:
		t.note("  (exit status %d)", *r.ExitCode)
	}
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

// serveInProcess serves one protocol connection of srv over pipes and runs
// use with its client; when use returns, the client's EOF ends the
// connection (the server cancels what still runs) and the server is
// waited for, torn down after 10 s. The server gets its own context: Ctrl+C
// is answered with turn.cancel through the protocol, not by tearing the
// server down under the turn.
func serveInProcess(srv *server.Server, use func(*client.Conn)) {
	p := client.ServeInProcess(context.Background(), srv.Serve)
	use(p.Conn)
	p.Close() // EOF for the server: it cancels what still runs and returns
}

// mentionNote is the line that says what one `@` mention attached.
func mentionNote(m proto.Mention) string {
	p := termtext.Line(m.Path)
	switch {
	case m.Refused != "":
		return "not attached @" + p + ": " + termtext.Line(m.Refused)
	case m.Kind == proto.MentionImage:
		return fmt.Sprintf("attached @%s (image, %s)", p, imagefile.Size(m.Bytes))
	case m.Truncated:
		return fmt.Sprintf("attached @%s (first %d bytes)", p, m.Bytes)
	}
	return fmt.Sprintf("attached @%s (%d bytes)", p, m.Bytes)
}
