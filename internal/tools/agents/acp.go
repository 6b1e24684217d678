package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/tools/agents/acpclient"
)

// The ACP transport (transport = "acp"): SCV starts the agent's ACP
// adapter in the agent's private home, with the same scrubbed environment,
// process group, containment and records as a print-mode run, and is its
// client: initialize (no file system, no terminal), session/new in the
// call's directory for a new conversation, session/prompt per call, the
// agent's session/update as progress and reply, session/cancel on
// cancellation (then, after the grace, the group stop). The adapter stays
// running while its conversation lives, so a follow-up call is one more
// prompt; one that finds no running adapter (evicted, or after a restart)
// starts one and reloads the conversation with session/load. The agent's
// permission requests become nested approvals (tool.Env.Ask).

// Transports.
const (
	TransportPrint = "print"
	TransportACP   = "acp"
)

// applyTransport applies the transport of o to a: with "acp" the adapter
// is the agent's ACP adapter, run without the print-mode arguments, and
// model and effort are not offered (the adapter's own defaults apply).
func applyTransport(a Adapter, o Override) (Adapter, error) {
	switch o.Transport {
	case "", TransportPrint:
		return a, nil
	case TransportACP:
	default:
		return Adapter{}, fmt.Errorf("agents.%s.transport: %q is not \"print\" or \"acp\"", a.Name, o.Transport)
	}
	if a.ACPCommand == "" {
		return Adapter{}, fmt.Errorf("agents.%s.transport: %s has no ACP adapter SCV knows; use \"print\"", a.Name, a.Title)
	}
	if a.Full {
		return Adapter{}, fmt.Errorf("agents.%s: permissions = \"full\" does not apply to transport = \"acp\", where every permission request of the agent goes to SCV's approvals; remove one of them", a.Name)
	}
	a.ACP = true
	if o.Command == "" {
		a.Command = a.ACPCommand
	}
	a.Args = slices.Clone(o.Args)
	a.FullArgs, a.OutputArgs, a.NewSessionArgs, a.ResumeArgs, a.ResumeCommand = nil, nil, nil, nil, nil
	a.ModelArgs, a.EffortArgs, a.PromptArgs = nil, nil, nil
	return a, nil
}

// Resumes says the agent can continue a conversation: through its CLI's
// resume, or through its ACP session.
func (a Adapter) Resumes() bool { return a.ACP || a.Descriptor.Resumes() }

// ACPGrace is how long a cancelled prompt turn gets to end after
// session/cancel before the adapter's group is stopped.
const ACPGrace = 2 * time.Second

// ACPPool holds the running ACP adapters, one per open conversation, so a
// follow-up call reuses the adapter and its session. Close stops them all.
type ACPPool struct {
	mu     sync.Mutex
	max    int
	idle   time.Duration
	live   map[string]*acpLive
	closed bool
	wg     sync.WaitGroup // adapters being stopped in the background
}

// NewACPPool returns an empty pool keeping at most max adapters running
// (the least recently used is stopped past it; 0 means 8), each stopped
// once unused for idle (0: only by the bound and Close).
func NewACPPool(max int, idle time.Duration) *ACPPool {
	if max <= 0 {
		max = 8
	}
	return &ACPPool{max: max, idle: idle, live: map[string]*acpLive{}}
}

// stopLater stops l in the background; Close waits for it. The caller
// holds p.mu (so no stop starts after Close began waiting).
func (p *ACPPool) stopLater(l *acpLive) {
	p.wg.Go(l.stop)
}

// acpLive is one running adapter and its ACP session.
type acpLive struct {
	child   *proc.Child
	conn    *acpclient.Conn
	session string
	stderr  *lockedTail
	used    time.Time
	cleanup func()
	// idle stops the adapter once unused for the pool's idle time.
	idle *time.Timer
	// turn receives the updates and permission requests of the running
	// prompt (nil between prompts: those are dropped, and permissions
	// refused).
	mu   sync.Mutex
	turn *acpTurn
}

func poolKey(session, handle string) string { return session + "\x00" + handle }

// take removes and returns the live adapter of a conversation, if it is
// still running.
func (p *ACPPool) take(session, handle string) *acpLive {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.live[poolKey(session, handle)]
	delete(p.live, poolKey(session, handle))
	if l != nil && l.idle != nil {
		l.idle.Stop()
	}
	if l != nil && l.exited() {
		p.stopLater(l)
		return nil
	}
	return l
}

// put keeps a live adapter for its conversation, stopping the least
// recently used one past the bound (or l itself once the pool closed).
func (p *ACPPool) put(session, handle string, l *acpLive) {
	p.mu.Lock()
	l.used = time.Now()
	if p.closed {
		p.mu.Unlock()
		l.stop()
		return
	}
	key := poolKey(session, handle)
	if old := p.live[key]; old != nil && old != l {
		p.stopLater(old)
	}
	p.live[key] = l
	if p.idle > 0 {
		l.idle = time.AfterFunc(p.idle, func() { p.expire(key, l) })
	}
	var evict *acpLive
	if len(p.live) > p.max {
		var oldest string
		for k, v := range p.live {
			if oldest == "" || v.used.Before(p.live[oldest].used) {
				oldest = k
			}
		}
		evict = p.live[oldest]
		delete(p.live, oldest)
	}
	p.mu.Unlock()
	if evict != nil {
		evict.stop()
	}
}

// expire stops l if it is still the idle adapter of key.
func (p *ACPPool) expire(key string, l *acpLive) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live[key] != l || p.closed {
		return
	}
	delete(p.live, key)
	p.stopLater(l)
}

// Close stops every adapter and makes the pool stop any handed back.
func (p *ACPPool) Close() {
	p.mu.Lock()
	p.closed = true
	all := make([]*acpLive, 0, len(p.live))
	for k, l := range p.live {
		all = append(all, l)
		delete(p.live, k)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range all {
		if l.idle != nil {
			l.idle.Stop()
		}
		wg.Go(l.stop)
	}
	wg.Wait()
	p.wg.Wait()
}

// Len is the number of running adapters.
func (p *ACPPool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live)
}

func (l *acpLive) exited() bool {
	select {
	case <-l.child.Done():
		return true
	case <-l.conn.Done():
		return true
	default:
		return false
	}
}

// stop ends the adapter: its stdin closed, TERM to its group, the grace,
// KILL; then its records.
func (l *acpLive) stop() {
	_ = l.child.Stdin.Close()
	l.child.Stop()
	l.conn.Wait()
	if l.cleanup != nil {
		l.cleanup()
	}
}

// lockedTail is a tailBuffer written by the adapter's stderr while a call
// reads it.
type lockedTail struct {
	mu sync.Mutex
	t  tailBuffer
}

func (l *lockedTail) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(b)
}

func (l *lockedTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.String()
}

func (l *acpLive) setTurn(t *acpTurn) {
	l.mu.Lock()
	l.turn = t
	l.mu.Unlock()
}

func (l *acpLive) current() *acpTurn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.turn
}

// startACP starts the adapter and initializes the connection. The adapter
// is recorded under the call's run handle until it is stopped.
func (t *agentTool) startACP(ctx context.Context, env tool.Env, dir string, c *call) (*acpLive, error) {
	home := t.opts.Layout.Adapter(t.a.Name)
	sb := t.opts.Sandbox
	sb.WritableRoots = append(slices.Clone(sb.WritableRoots), home)
	cmd, err := sandbox.Wrap(sb, env.Workspace, t.exe, t.a.Args, c.env)
	if err != nil {
		return nil, fmt.Errorf("cannot run the agent's ACP adapter: %w", err)
	}
	l := &acpLive{stderr: &lockedTail{t: tailBuffer{n: StderrTailBytes}}}
	tr := t.opts.Tracker
	contained := t.opts.Contain.Mechanism() != proc.MechGroupTag
	spec := proc.Spec{Path: cmd.Path, Args: cmd.Args, Dir: dir, Env: cmd.Env, Stderr: l.stderr,
		Contain: t.opts.Contain, Confine: cmd.Confine, AfterExit: cmd.Close}
	if tr != nil && !contained {
		spec.AfterExit = func() { tr.Sweep(c.handle); cmd.Close() }
	}
	child, err := proc.Start(spec)
	if err != nil {
		cmd.Close()
		return nil, fmt.Errorf("start %s: %w", t.exe, err)
	}
	l.child = child
	if tr != nil {
		if err := tr.Start(delegation.Record{Handle: c.handle, Agent: t.a.Name, Session: env.SessionID, Cwd: dir, Depth: t.opts.Depth + 1, PID: child.PID()}); err != nil {
			t.opts.Logger.Warn("cannot record delegation", "handle", c.handle, "err", err)
		}
		handle := c.handle
		l.cleanup = func() {
			if contained {
				tr.End(handle)
			} else {
				tr.Finish(handle)
			}
		}
	}
	if env.Progress != nil {
		env.Progress(fmt.Sprintf("agent_%s started its ACP adapter as %s (pid %d)", t.a.Name, c.handle, child.PID()))
	}
	l.conn = acpclient.New(child.Stdout, child.Stdin, acpclient.Handler{
		Update: func(_ string, u acpclient.Update) {
			if turn := l.current(); turn != nil {
				turn.update(u)
			}
		},
		Permission: func(pctx context.Context, r acpclient.PermissionRequest) string {
			if turn := l.current(); turn != nil {
				return turn.permission(pctx, r)
			}
			return r.Option("reject_once", "reject_always")
		},
	})
	ictx, cancel := context.WithTimeout(ctx, acpStartTimeout)
	defer cancel()
	if _, err := l.conn.Initialize(ictx, "scv"); err != nil {
		l.stop()
		return nil, fmt.Errorf("initialize the ACP adapter %s: %w%s", t.exe, err, stderrNote(l.stderr.String()))
	}
	return l, nil
}

// acpStartTimeout bounds initialize and session/new or session/load.
const acpStartTimeout = 2 * time.Minute

func stderrNote(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return "; its stderr ends: " + s
}

// openSession gives the call its adapter and ACP session: the running one
// of the conversation, or a new adapter with a new session (a new
// conversation) or the conversation's session loaded again.
func (t *agentTool) openSession(ctx context.Context, env tool.Env, dir string, c *call, vendorID string) (*acpLive, error) {
	if c.conv != "" {
		if l := t.opts.ACP.take(env.SessionID, c.conv); l != nil && l.session == vendorID {
			return l, nil
		} else if l != nil {
			l.stop()
		}
	}
	l, err := t.startACP(ctx, env, dir, c)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, acpStartTimeout)
	defer cancel()
	if vendorID == "" {
		l.session, err = l.conn.NewSession(sctx, dir)
	} else {
		l.session = vendorID
		err = l.conn.LoadSession(sctx, vendorID, dir)
	}
	if err != nil {
		l.stop()
		return nil, fmt.Errorf("open the ACP session: %w%s", err, stderrNote(l.stderr.String()))
	}
	return l, nil
}

func (t *agentTool) runACP(ctx context.Context, env tool.Env, rawCwd string, c *call) tool.Result {
	dir, err := resolveCwd(env.Workspace, rawCwd)
	if err != nil {
		return tool.Fail(tool.InvalidArguments, "%v", err)
	}
	if err := t.a.EnsureHome(t.opts.Layout.Adapter(t.a.Name)); err != nil {
		return tool.Fail(tool.Failed, "%v", err)
	}
	lease, refused := t.lease(ctx, env, dir, c)
	if lease == nil {
		return refused
	}
	vendorID := ""
	if conv, ok := lease.Conversation(); ok {
		vendorID = conv.VendorID
	}
	limit := env.OutputLimit
	if limit <= 0 {
		limit = t.opts.OutputLimit
	}
	l, err := t.openSession(ctx, env, dir, c, vendorID)
	if err != nil {
		lease.Release()
		r := Result{Agent: t.a.Name, Status: StatusFailed, Reply: err.Error()}
		if ctx.Err() != nil {
			r.Status = StatusCancelled
		}
		t.signInHint(&r, "", err)
		return encodeResult(false, tool.Failed, r, limit)
	}
	turn := &acpTurn{t: t, env: env, label: t.conversationLabel(ctx, env, c), limit: limit}
	r := t.promptACP(ctx, l, turn, c)
	keep := r.Status == StatusCompleted || r.Status == StatusFailed && !l.exited()
	t.recordTurn(ctx, lease, l.session, &r)
	if keep && r.Session != "" {
		t.opts.ACP.put(env.SessionID, r.Session, l)
	} else {
		l.stop()
	}
	kind := tool.ErrorKind("")
	switch r.Status {
	case StatusFailed:
		kind = tool.Failed
	case StatusTimeout:
		kind = tool.Limit
	case StatusCancelled:
		kind = tool.Cancelled
	}
	return encodeResult(r.Status == StatusCompleted, kind, r, limit)
}

// conversationLabel names the call's conversation in its nested
// approvals: its handle, or for a new one the handle it is about to get
// (another new conversation of the agent finishing first could take it;
// the run handle when the registry cannot be read).
func (t *agentTool) conversationLabel(ctx context.Context, env tool.Env, c *call) string {
	if c.conv != "" {
		return c.conv
	}
	lctx, cancel := context.WithTimeout(ctx, conversationTimeout)
	defer cancel()
	all, err := t.opts.Conversations.List(lctx, env.SessionID)
	if err != nil {
		return c.handle
	}
	n := 0
	for _, conv := range all {
		if conv.Agent == t.a.Name {
			n = max(n, conv.N)
		}
	}
	return t.a.Name + "-" + strconv.Itoa(n+1)
}

// promptACP runs one prompt turn: cancellation and the deadline send
// session/cancel and, when the turn has not ended ACPGrace later, stop
// the adapter's group.
func (t *agentTool) promptACP(ctx context.Context, l *acpLive, turn *acpTurn, c *call) Result {
	l.setTurn(turn)
	defer l.setTurn(nil)
	type outcome struct {
		res acpclient.PromptResult
		err error
	}
	done := make(chan outcome, 1)
	pctx, stopPrompt := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPrompt()
	go func() {
		res, err := l.conn.Prompt(pctx, l.session, c.prompt)
		done <- outcome{res, err}
	}()
	deadline := time.NewTimer(c.timeout)
	defer deadline.Stop()
	status := ""
	var out outcome
	select {
	case out = <-done:
	case <-ctx.Done():
		status = StatusCancelled
	case <-deadline.C:
		status = StatusTimeout
	}
	if status != "" {
		turn.stopAsking()
		_ = l.conn.Cancel(l.session)
		grace := time.NewTimer(ACPGrace)
		select {
		case out = <-done:
		case <-grace.C:
			l.child.Stop()
			stopPrompt()
			out = <-done
		}
		grace.Stop()
	}
	return turn.result(status, out.res, out.err, l.stderr.String())
}

// acpTurn gathers one prompt turn's reply and progress and answers its
// permission requests.
type acpTurn struct {
	t     *agentTool
	env   tool.Env
	label string
	limit int

	mu       sync.Mutex
	reply    strings.Builder
	cut      bool
	said     bool
	titles   map[string]string
	stopping bool
	denied   []string
}

func (a *acpTurn) progress(s string) {
	if a.env.Progress == nil {
		return
	}
	if s = progressText(s); s != "" {
		a.env.Progress(s)
	}
}

func (a *acpTurn) update(u acpclient.Update) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch u.Kind {
	case "agent_message_chunk":
		if u.Content == nil || u.Content.Type != "text" {
			return
		}
		if a.reply.Len()+len(u.Content.Text) > a.limit {
			a.cut = true
			return
		}
		a.reply.WriteString(u.Content.Text)
		if !a.said && strings.TrimSpace(a.reply.String()) != "" && strings.Contains(a.reply.String(), "\n") {
			a.said = true
			a.progress(firstLine(a.reply.String()))
		}
	case "tool_call", "tool_call_update":
		if a.titles == nil {
			a.titles = map[string]string{}
		}
		if u.Title != "" && a.titles[u.ToolCallID] != u.Title {
			a.titles[u.ToolCallID] = u.Title
			a.progress(u.Title)
		}
		if u.Status == "failed" {
			a.progress("failed: " + a.titles[u.ToolCallID])
		}
	}
}

// stopAsking makes every later permission request of the turn refused
// (it is being cancelled).
func (a *acpTurn) stopAsking() {
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
}

// permission relays a permission request to SCV's approval gate as a
// nested approval and picks the agent's allow-once or reject-once option.
func (a *acpTurn) permission(ctx context.Context, r acpclient.PermissionRequest) string {
	reject := r.Option("reject_once", "reject_always")
	allow := r.Option("allow_once", "allow_always")
	a.mu.Lock()
	stopping := a.stopping
	a.mu.Unlock()
	if stopping || allow == "" {
		return reject
	}
	title, _ := boundText(oneLineOf(r.ToolCall.Title), acpTitleBytes)
	if title == "" {
		title = "a step"
	}
	kind, _ := boundText(oneLineOf(cmpOr(r.ToolCall.Kind, "other")), 40)
	if a.env.Ask == nil {
		a.mu.Lock()
		a.denied = append(a.denied, fmt.Sprintf("%s (%s): refused: no one can approve a step of a background job; run the call without `background` to approve its steps", title, kind))
		a.mu.Unlock()
		a.progress("denied: " + title)
		return reject
	}
	step := tool.Plan{
		Risk:    ACPRisk(kind, title, r.ToolCall.RawInput, locations(r.ToolCall)),
		Summary: fmt.Sprintf("[%s] %s (%s)", a.label, title, kind),
	}
	if cmd := rawCommand(r.ToolCall.RawInput); kind == "execute" && cmd != "" {
		step.Command = cmd
		shown, _ := boundPrompt(cmd)
		step.Summary += "\nCommand: " + shown
	}
	if ps := locations(r.ToolCall); len(ps) > 0 {
		step.Summary += "\nPaths: " + strings.Join(ps, ", ")
		step.Paths, step.NoGrant = workspacePaths(a.env.Workspace, ps)
		if step.NoGrant {
			step.NoGrantWhy = "the step names a path outside the workspace: asked every time"
		}
	}
	step.Summary += fmt.Sprintf("\nAsked by %s, delegated from this session's agent_%s call.", a.t.a.Title, a.t.a.Name)
	ok, why := a.env.Ask(ctx, step)
	if !ok {
		a.mu.Lock()
		a.denied = append(a.denied, fmt.Sprintf("%s (%s): %s", title, kind, oneLineOf(why)))
		a.mu.Unlock()
		a.progress("denied: " + title)
		return reject
	}
	return allow
}

// workspacePaths are the workspace-relative slash paths of a step's
// locations (what a session grant's path matches); outside says one lies
// outside the workspace, where no grant may cover the step.
func workspacePaths(workspace string, paths []string) (rel []string, outside bool) {
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		ws = workspace
	}
	for _, p := range paths {
		r, err := filepath.Rel(ws, filepath.Clean(p))
		if !filepath.IsAbs(p) || err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return nil, true
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	return rel, false
}

// acpTitleBytes bounds the agent's title of a step in an approval.
const acpTitleBytes = 300

func oneLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func locations(tc acpclient.ToolCall) []string {
	var out []string
	for _, l := range tc.Locations {
		if l.Path != "" {
			out = append(out, l.Path)
		}
	}
	return out
}

// rawCommand is the command of an execute step's raw input, when it has
// one ("command" as a string or a list of words).
func rawCommand(raw json.RawMessage) string {
	var in struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(raw, &in) != nil || len(in.Command) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		return s
	}
	var words []string
	if json.Unmarshal(in.Command, &words) == nil {
		if len(words) == 3 && (words[1] == "-c" || words[1] == "-lc") {
			return words[2]
		}
		return strings.Join(words, " ")
	}
	return ""
}

// ACPRisk is the risk class of an ACP tool kind: reading, searching and
// thinking are read_only unless they touch a secret-like path (then
// filesystem), edits, deletes and moves filesystem, execute process,
// fetch network, anything else delegate.
func ACPRisk(kind, title string, raw json.RawMessage, paths []string) tool.Risk {
	switch kind {
	case "read", "search", "think":
		for _, p := range append(slices.Clone(paths), title, string(raw)) {
			for _, w := range strings.FieldsFunc(p, func(r rune) bool { return r == ' ' || r == '"' || r == ',' || r == ':' || r == '{' || r == '}' }) {
				if tool.SecretLike(w) {
					return tool.Filesystem
				}
			}
		}
		return tool.ReadOnly
	case "edit", "delete", "move":
		return tool.Filesystem
	case "execute":
		return tool.Process
	case "fetch":
		return tool.Network
	}
	return tool.Delegate
}

// result is the tool result of a prompt turn that ended with res/err, or
// was stopped (status cancelled or timeout).
func (a *acpTurn) result(status string, res acpclient.PromptResult, err error, stderr string) Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := Result{Agent: a.t.a.Name, Reply: a.reply.String(), Truncated: a.cut, StderrTail: stderr}
	switch {
	case status != "":
		r.Status = status
	case err != nil:
		r.Status = StatusFailed
		if strings.TrimSpace(r.Reply) == "" || !errors.Is(err, acpclient.ErrClosed) {
			r.Reply = strings.TrimSpace(r.Reply + "\n" + err.Error())
		}
	case res.StopReason == "cancelled" && len(a.denied) > 0:
		// The agent's only refusal ends its turn (Codex's "abort"): the
		// turn is over as the person decided, not cancelled.
		r.Status = StatusCompleted
	case res.StopReason == "cancelled":
		r.Status = StatusCancelled
	case res.StopReason == "refusal":
		r.Status = StatusFailed
	default:
		r.Status = StatusCompleted
	}
	if status == "" && err == nil {
		r.StderrTail = ""
	}
	if u := res.Usage; u != nil {
		r.Usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.CachedReadTokens}
	}
	if len(a.denied) > 0 {
		r.Hint = "SCV's approvals refused these steps the agent asked for: " + strings.Join(a.denied, "; ")
		if res.StopReason == "cancelled" {
			r.Hint += ". The agent ended its turn there; continue the conversation to tell it what to do instead"
		}
	}
	if r.Status == StatusFailed {
		a.t.signInHint(&r, stderr, err)
	}
	return r
}

// ACPAuthRequired is the ACP error code of a request the agent refuses
// until it is signed in.
const ACPAuthRequired = -32000

// signInHint sets the hint of a failed run that looks signed out: the
// adapter's "authentication required", or the CLI's own sign-in texts.
func (t *agentTool) signInHint(r *Result, stderr string, err error) {
	var rpc *acpclient.RPCError
	if errors.As(err, &rpc) && rpc.Code == ACPAuthRequired || signInProblem(r.Reply, stderr) {
		r.Hint = fmt.Sprintf("%s does not seem to be signed in on the SCV host. Ask the user to run `scv agents login %s` there (the agent's own advice, such as /login, cannot be followed from here).", t.a.Title, t.a.Name)
	}
}
