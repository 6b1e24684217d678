package agents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
)

type agentTool struct {
	opts Options
	a    Adapter
	exe  string
}

// call is one planned run.
type call struct {
	handle, dir, outDir string
	argv, env           []string
	timeout             time.Duration
	prompt              string
	sel                 Selection
	// conv is the conversation the call continues ("" for a new one),
	// convCwd the directory the call named for it ("" to keep its own).
	conv, convCwd string
	// job is the background job the run is ("" in the foreground).
	job string
}

// summaryPromptBytes bounds the prompt shown in an approval summary.
const summaryPromptBytes = 2000

func (t *agentTool) plan(env tool.Env, p Params) (tool.Plan, error) {
	model, effort := strings.TrimSpace(p.Model), strings.TrimSpace(p.Effort)
	if strings.TrimSpace(p.Prompt) == "" {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "prompt is empty: give the agent a self-contained task")
	}
	if strings.HasPrefix(p.Prompt, "-") {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "the prompt cannot start with '-' (it would be read as a flag): reword it")
	}
	timeout := t.opts.DefaultTimeout
	if p.TimeoutSeconds != 0 {
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	if timeout <= 0 || timeout > t.opts.MaxTimeout {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "timeout_seconds must be between 1 and %d", int(t.opts.MaxTimeout/time.Second))
	}
	dir, err := resolveCwd(env.Workspace, p.Cwd)
	if err != nil {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "%v", err)
	}
	conv, err := t.conversation(env, p, dir)
	if err != nil {
		return tool.Plan{}, err
	}
	if conv != nil {
		// A conversation stays where it started.
		if dir, err = resolveCwd(env.Workspace, conv.Cwd); err != nil {
			return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "the directory of conversation %s: %v", conv.Handle, err)
		}
	}
	handle, err := t.newHandle()
	if err != nil {
		return tool.Plan{}, err
	}
	home := t.opts.Layout.Adapter(t.a.Name)
	c := &call{handle: handle, dir: dir, timeout: timeout, prompt: p.Prompt}
	sel := Selection{Model: model, Effort: effort, SessionID: uuid.NewString()}
	if t.a.Format == FormatCodex {
		c.outDir = filepath.Join(home, "tmp", handle)
		sel.OutputFile = filepath.Join(c.outDir, "last-message.txt")
	}
	if conv != nil {
		sel.Resume, c.conv = conv.VendorID, conv.Handle
		if strings.TrimSpace(p.Cwd) != "" {
			c.convCwd = dir
		}
	}
	c.sel = sel
	rawCwd := p.Cwd
	if conv != nil && strings.TrimSpace(rawCwd) == "" {
		rawCwd = conv.Cwd // resolved again at Run, as a given cwd is
	}
	c.argv, err = t.a.Argv(sel, p.Prompt)
	if err != nil {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "%v", err)
	}
	run := t.run
	if t.a.ACP {
		c.argv, run = slices.Clone(t.a.Args), t.runACP // the prompt goes in session/prompt
	}
	c.env = t.a.Env(EnvSpec{
		Base: t.opts.Env, AdapterHome: home, SCVHome: t.opts.Layout.Home,
		Parent: delegation.Tag(t.opts.ParentChain, t.opts.InstanceID, env.SessionID, handle),
		Depth:  t.opts.Depth + 1, Remove: t.opts.KeyVars,
	})
	return t.background(env, p.Background, rawCwd, c, tool.Plan{
		Risk:    tool.Delegate,
		Summary: t.summary(env, c),
		// An agent with its own approvals switched off is asked about
		// every time, never allowed for the rest of a session.
		NoGrant:    t.a.Full,
		NoGrantWhy: "the agent runs with its own approvals switched off (permissions = \"full\"): asked every time and never covered by a grant",
		Run:        func(ctx context.Context) tool.Result { return run(ctx, env, rawCwd, c) },
	})
}

// conversationTimeout bounds a read or write of the conversation registry's
// store.
const conversationTimeout = 10 * time.Second

// conversation checks the `session` argument: nil for a new conversation,
// else the conversation to continue, refused (no approval asked) when the
// agent cannot resume, the value is not a handle, or the conversation is
// unknown, closed, another agent's, elsewhere or busy.
func (t *agentTool) conversation(env tool.Env, p Params, dir string) (*delegation.Conversation, error) {
	handle := strings.TrimSpace(p.Session)
	if handle == "" {
		return nil, nil
	}
	if !t.a.Resumes() {
		return nil, tool.Errorf(tool.InvalidArguments, "agent_%s cannot continue a conversation: %s has no resume SCV can drive. Omit `session` and give the whole context in the prompt", t.a.Name, t.a.Title)
	}
	if prefix, _, _ := strings.Cut(handle, "-"); !delegation.ValidConversationHandle(handle) || !slices.Contains(Names(), prefix) {
		return nil, tool.Errorf(tool.InvalidArguments, "session %q is not a conversation handle: use the `session` value (such as %s-1) an earlier agent_%s result returned; an agent's own session or thread id is not accepted", handle, t.a.Name, t.a.Name)
	}
	cwd := ""
	if strings.TrimSpace(p.Cwd) != "" {
		cwd = dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), conversationTimeout)
	defer cancel()
	c, err := t.opts.Conversations.Peek(ctx, env.SessionID, t.a.Name, handle, cwd)
	if err != nil {
		return nil, conversationError(err)
	}
	return &c, nil
}

// conversationError is the model's view of a registry refusal.
func conversationError(err error) *tool.Error {
	var busy *delegation.BusyError
	if errors.As(err, &busy) {
		return &tool.Error{Kind: tool.SessionBusy, Message: err.Error()}
	}
	return &tool.Error{Kind: tool.InvalidArguments, Message: err.Error()}
}

func (t *agentTool) newHandle() (string, error) {
	if t.opts.Tracker != nil {
		return t.opts.Tracker.NewHandle(t.a.Name)
	}
	return delegation.NewHandle(t.a.Name)
}

func (t *agentTool) summary(env tool.Env, c *call) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Delegate to %s (agent_%s).\n", t.a.Title, t.a.Name)
	if t.a.Full {
		b.WriteString("FULL PERMISSIONS: the agent runs with its own approvals and sandbox switched off.\n")
	}
	fmt.Fprintf(&b, "Executable: %s\n", t.exe)
	argv := make([]string, 0, len(c.argv)+1)
	argv = append(argv, strconv.Quote(t.exe))
	for i, s := range c.argv {
		if i == len(c.argv)-1 && !t.a.ACP {
			s, _ = boundPrompt(s)
		}
		argv = append(argv, strconv.Quote(s))
	}
	fmt.Fprintf(&b, "Argv: %s\n", strings.Join(argv, " "))
	if t.a.ACP {
		b.WriteString("Transport: acp (each step the agent asks permission for comes to SCV's approvals)\n")
	}
	pr, _ := boundPrompt(c.prompt)
	fmt.Fprintf(&b, "Prompt: %s\n", pr)
	if c.conv != "" {
		fmt.Fprintf(&b, "Conversation: continues %s\n", c.conv)
	} else if t.a.Resumes() {
		b.WriteString("Conversation: new\n")
	}
	fmt.Fprintf(&b, "Directory: %s\n", c.dir)
	fmt.Fprintf(&b, "Workspace: %s\n", env.Workspace)
	fmt.Fprintf(&b, "Timeout: %ds\n", int(c.timeout/time.Second))
	fmt.Fprintf(&b, "Sandbox: %s\n", t.opts.Sandbox.Summary())
	b.WriteString("Risk: delegate. The agent may independently read and write files, run commands, use its own credentials and ask its own model provider.")
	return b.String()
}

func boundPrompt(s string) (string, bool) {
	out, cut := boundText(s, summaryPromptBytes)
	if cut {
		out += fmt.Sprintf("… [%d more bytes]", len(s)-len(out))
	}
	return out, cut
}

// resolveCwd resolves the requested directory (blank = the workspace root)
// following symlinks and requires an existing directory inside the
// workspace.
func resolveCwd(workspace, cwd string) (string, error) {
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspace, err)
	}
	cwd = strings.TrimSpace(cwd)
	if cwd == "" {
		return ws, nil
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("cwd %q does not exist: use a directory inside the workspace %s", cwd, ws)
	}
	rel, err := filepath.Rel(ws, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("cwd %q resolves to %s, outside the workspace %s", cwd, real, ws)
	}
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("cwd %q is not a directory", cwd)
	}
	return real, nil
}

// Result is the tool result object.
type Result struct {
	Agent string `json:"agent"`
	// Session is the conversation's handle and Turn this call's number in
	// it, when the agent can continue conversations.
	Session    string `json:"session,omitempty"`
	Turn       int    `json:"turn,omitempty"`
	Status     string `json:"status"`
	Reply      string `json:"reply"`
	Usage      *Usage `json:"usage"`
	ExitCode   *int   `json:"exit_code"`
	StderrTail string `json:"stderr_tail"`
	Truncated  bool   `json:"truncated"`
	Hint       string `json:"hint,omitempty"`
}

// Run statuses.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
)

func (t *agentTool) run(ctx context.Context, env tool.Env, rawCwd string, c *call) tool.Result {
	// The directory resolves again at call time: a symlink may have moved
	// between approval and now.
	dir, err := resolveCwd(env.Workspace, rawCwd)
	if err != nil {
		return tool.Fail(tool.InvalidArguments, "%v", err)
	}
	home := t.opts.Layout.Adapter(t.a.Name)
	if err := t.a.EnsureHome(home); err != nil {
		return tool.Fail(tool.Failed, "%v", err)
	}
	lease, refused := t.lease(ctx, env, dir, c)
	if lease == nil {
		return refused
	}
	started := false
	defer func() {
		if !started {
			lease.Release()
		}
	}()
	if c.outDir != "" {
		if err := os.MkdirAll(c.outDir, 0o700); err != nil {
			return tool.Fail(tool.Failed, "create codex output directory: %v", err)
		}
		defer os.RemoveAll(c.outDir)
	}
	limit := env.OutputLimit
	if limit <= 0 {
		limit = t.opts.OutputLimit
	}
	par := newParser(t.a.Format, limit)
	par.progress = env.Progress
	stderr := &tailBuffer{n: StderrTailBytes}
	tr := t.opts.Tracker
	spec, cmd, contained, err := t.procSpec(env, dir, home, c, par, stderr)
	if err != nil {
		return tool.Fail(tool.Failed, "cannot run the agent: %v", err)
	}
	defer cmd.Close()
	res, err := proc.Run(ctx, spec)
	started = err == nil
	killed := false
	switch {
	case tr != nil && contained:
		killed = tr.End(c.handle)
	case tr != nil:
		killed = tr.Finish(c.handle)
	}
	if err != nil {
		return tool.Fail(tool.Failed, "start %s: %v", t.exe, err)
	}
	out := par.finish()
	r := t.result(out, res, killed, stderr.String(), limit, c.outDir)
	t.recordTurn(ctx, lease, out.SessionID, &r)
	return encodeResult(r.Status == StatusCompleted, statusKind(r.Status), r, limit)
}

// statusKind is the error kind of a run that ended with status.
func statusKind(status string) tool.ErrorKind {
	switch status {
	case StatusFailed:
		return tool.Failed
	case StatusTimeout:
		return tool.Limit
	case StatusCancelled:
		return tool.Cancelled
	}
	return ""
}

// procSpec is the process of c's run: the agent's command wrapped in the
// sandbox (home writable), its output into par and stderr, and on start
// the progress line and the delegation record. contained says the run's
// containment holds every process it starts (no tag sweep after exit).
func (t *agentTool) procSpec(env tool.Env, dir, home string, c *call, par, stderr io.Writer) (proc.Spec, sandbox.Command, bool, error) {
	tr := t.opts.Tracker
	// The sandbox only confines the thread the agent is started from: the
	// group, deadline and delegation records apply to the agent as they
	// do unsandboxed.
	sb := t.opts.Sandbox
	sb.WritableRoots = append(slices.Clone(sb.WritableRoots), home)
	cmd, err := sandbox.Wrap(sb, env.Workspace, t.exe, c.argv, c.env)
	if err != nil {
		return proc.Spec{}, cmd, false, err
	}
	spec := proc.Spec{
		Path: cmd.Path, Args: cmd.Args, Dir: dir, Env: cmd.Env,
		Stdout: par, Stderr: stderr, Timeout: c.timeout, Contain: t.opts.Contain, Confine: cmd.Confine,
	}
	// A contained run's scope holds every process it started; the sweep of
	// every process's environment is then left to the reconcile.
	contained := t.opts.Contain.Mechanism() != proc.MechGroupTag
	spec.OnStart = func(pid int) {
		if env.Progress != nil {
			env.Progress(fmt.Sprintf("agent_%s started as %s (pid %d)", t.a.Name, c.handle, pid))
		}
		if tr == nil {
			return
		}
		err := tr.Start(delegation.Record{Handle: c.handle, Agent: t.a.Name, Session: env.SessionID, Job: c.job, Cwd: dir, Depth: t.opts.Depth + 1, PID: pid})
		if err != nil {
			t.opts.Logger.Warn("cannot record delegation", "handle", c.handle, "err", err)
		}
	}
	if tr != nil && !contained {
		spec.AfterExit = func() { tr.Sweep(c.handle) }
	}
	return spec, cmd, contained, nil
}

// lease takes the conversation's turn: the one the call continues (its
// argv rebuilt if the CLI's id moved since the approval), or a new one the
// run may start. A nil lease comes with the failed result.
func (t *agentTool) lease(ctx context.Context, env tool.Env, dir string, c *call) (*delegation.Lease, tool.Result) {
	reg := t.opts.Conversations
	if c.conv == "" {
		return reg.Start(env.SessionID, t.a.Name, dir), tool.Result{}
	}
	cwd := ""
	if c.convCwd != "" {
		cwd = dir
	}
	lctx, cancel := context.WithTimeout(ctx, conversationTimeout)
	defer cancel()
	lease, err := reg.Acquire(lctx, env.SessionID, t.a.Name, c.conv, cwd, env.CallID)
	if err != nil {
		e := conversationError(err)
		return nil, tool.Fail(e.Kind, "%s", e.Message)
	}
	if conv, _ := lease.Conversation(); conv.VendorID != c.sel.Resume {
		sel := c.sel
		sel.Resume = conv.VendorID
		argv, err := t.a.Argv(sel, c.prompt)
		if err != nil {
			lease.Release()
			return nil, tool.Fail(tool.InvalidArguments, "%v", err)
		}
		c.argv = argv
	}
	return lease, tool.Result{}
}

// recordTurn records the run's turn of its conversation and tells the
// model the handle and turn number. A new conversation is kept only when
// the CLI reported the id to resume it with; one that cannot be recorded
// is only logged (the run itself happened).
func (t *agentTool) recordTurn(ctx context.Context, lease *delegation.Lease, vendorID string, r *Result) {
	if !t.a.Resumes() {
		lease.Release()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), conversationTimeout)
	defer cancel()
	conv, ok, err := lease.Done(ctx, vendorID)
	if err != nil {
		t.opts.Logger.Warn("cannot record the conversation of a delegated run", "agent", t.a.Name, "err", err)
		return
	}
	if ok {
		r.Session, r.Turn = conv.Handle, conv.Turns
	}
}

// encodeResult keeps the result object within limit bytes after encoding:
// stderr_tail gets at most a quarter of the room (its end kept), the reply
// the rest (its beginning kept); the hint goes first when even the fixed
// fields do not fit. "truncated" is set when anything was cut.
func encodeResult(success bool, kind tool.ErrorKind, r Result, limit int) tool.Result {
	reply, stderr := r.Reply, r.StderrTail
	r.Reply, r.StderrTail = "", ""
	truncated := r.Truncated
	r.Truncated = false // the longer value: the budget holds either way
	fixed, err := tool.EncodeJSON(r)
	if err != nil {
		return tool.Fail(tool.Failed, "encode result: %v", err)
	}
	if len(fixed) > limit && r.Hint != "" {
		r.Hint, truncated = "", true
		if fixed, err = tool.EncodeJSON(r); err != nil {
			return tool.Fail(tool.Failed, "encode result: %v", err)
		}
	}
	room := limit - len(fixed)
	r.StderrTail = tool.FitJSONSuffix(stderr, min(tool.JSONLen(stderr), max(room/4, 0)))
	r.Reply = tool.FitJSON(reply, room-tool.JSONLen(r.StderrTail))
	r.Truncated = truncated || r.Reply != reply || r.StderrTail != stderr
	return tool.JSONWithin(success, kind, r, r.Truncated, limit)
}

// result turns what the stream said and how the process ended into the
// result object. The exit code alone is never trusted: a reported error
// fails the run even with exit 0.
func (t *agentTool) result(out outcome, res proc.Result, killed bool, stderrTail string, limit int, outDir string) Result {
	r := Result{Agent: t.a.Name, ExitCode: res.ExitCode, StderrTail: stderrTail, Usage: out.Usage}
	switch {
	case killed || res.Cancelled:
		r.Status = StatusCancelled
	case res.TimedOut:
		r.Status = StatusTimeout
	case res.ExitCode == nil || *res.ExitCode != 0 || out.Failed:
		r.Status = StatusFailed
	default:
		r.Status = StatusCompleted
	}
	reply, haveReply := out.Reply, out.HaveReply
	if !haveReply && outDir != "" {
		reply, haveReply = readBounded(filepath.Join(outDir, "last-message.txt"), limit)
	}
	textTrunc := false
	switch {
	case t.a.Format == FormatText || (!out.SawJSON && !haveReply):
		reply, textTrunc = out.Text, out.TextTruncated
	case r.Status != StatusCompleted && strings.TrimSpace(reply) == "" && out.ErrMsg != "":
		reply = out.ErrMsg
	}
	reply, cut := boundText(reply, limit)
	r.Reply = reply
	r.Truncated = cut || textTrunc || out.SkippedLines > 0
	if r.Status == StatusFailed || r.Status == StatusTimeout {
		if signInProblem(out.ErrCode, out.ErrMsg, reply, stderrTail) {
			r.Hint = fmt.Sprintf("%s does not seem to be signed in on the SCV host. Ask the user to run `scv agents login %s` there (the agent's own advice, such as /login, cannot be followed from here).", t.a.Title, t.a.Name)
		}
	}
	return r
}

// readBounded reads at most limit bytes (plus a little, to know about
// truncation) of a small file; a missing or empty file is no reply.
func readBounded(path string, limit int) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+4))
	if err != nil && !errors.Is(err, io.EOF) || len(b) == 0 {
		return "", false
	}
	return string(b), true
}

// signInMarkers are texts the real CLIs print when they are signed out or
// their key is wrong (testdata/streams/README.md).
var signInMarkers = []string{
	"not logged in", "/login", "authentication_failed", "401", "unauthorized",
	"incorrect api key", "invalid api key", "invalid x-api-key", "missing environment variable",
	"no api key found", "please log in", "please login", "not signed in", "oauth token",
}

func signInProblem(texts ...string) bool {
	for _, s := range texts {
		l := strings.ToLower(s)
		for _, m := range signInMarkers {
			if strings.Contains(l, m) {
				return true
			}
		}
	}
	return false
}
