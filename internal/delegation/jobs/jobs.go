// Package jobs keeps the background jobs of delegated agents: an agent_*
// call made with `background: true` runs as a job that belongs to the
// process (the daemon), not to the turn or the client connection that
// started it. A job has a handle local to its session (job-<n>), a status, and once it ends a bounded reply and the
// agent's whole result. When a job ends the table hands a Report to the
// one door it was given (the server's), which turns it into a report in
// the job's session.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Statuses of a job; the ended ones are those of an agent_* result.
const (
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
	Timeout   = "timeout"
	Cancelled = "cancelled"
)

// Defaults of the agent.* keys (docs/configuration.md).
const (
	DefaultMaxBackground = 4
	// ReportReplyBytes bounds the reply quoted in a report message.
	ReportReplyBytes = 2000
	// keepEnded is how many ended jobs a session keeps for agent_status.
	keepEnded = 16
)

// Report is what the table hands its door when a job ends: the session
// it belongs to and the system-authored text for its history.
type Report struct {
	Session, Job, Agent, Status string
	// Text is "job-2 (codex) completed: <reply, bounded>".
	Text string
	// Reason, when set, says why the job ended that way (cancelled by
	// agent_cancel, the daemon stopped).
	Reason string
	// Wanted says whether the report is still news: false once the model
	// has read the job's end through agent_wait or agent_status.
	Wanted func() bool
}

// Outcome is how a job's run ended: its status, reply and the agent's
// whole result object (JSON).
type Outcome struct {
	Status string
	Reply  string
	Result json.RawMessage
}

// Run is a job's work, told its job handle: it must honour ctx.
type Run func(ctx context.Context, job string) Outcome

// Info is what agent_status, agent_wait and `scv agents ps` show of a job.
type Info struct {
	Job       string    `json:"job"`
	Agent     string    `json:"agent"`
	Session   string    `json:"session"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Reason says why a job was cancelled.
	Reason string `json:"reason,omitempty"`
	// Result is the agent's result object once the job ended.
	Result json.RawMessage `json:"result,omitempty"`
}

// Options configure a Table.
type Options struct {
	// MaxPerSession is agent.max_background: running jobs per session
	// (DefaultMaxBackground when 0).
	MaxPerSession int
	// Report is the door: told of every job that ends, in the job's own
	// goroutine (it must not block for long). nil drops reports.
	Report func(Report)
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Gone, when set, says a session no longer exists (deleted from the
	// session database by another process, or pruned): while a session
	// has running jobs it is asked every CheckEvery (DefaultCheckEvery
	// when 0), and a gone session's jobs stop as with CancelSession.
	Gone       func(ctx context.Context, session string) bool
	CheckEvery time.Duration
}

// DefaultCheckEvery is how often a running job's session is looked for.
const DefaultCheckEvery = time.Second

// Errors of the table.
var (
	ErrClosed  = errors.New("background jobs are stopping: the process is shutting down")
	ErrUnknown = errors.New("no such job")
)

// LimitError refuses a job over agent.max_background.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("this session already runs %d background jobs (agent.max_background): wait for one with agent_wait or stop one with agent_cancel", e.Max)
}

type job struct {
	info   Info
	cancel context.CancelFunc
	done   chan struct{}
	seen   bool
}

// Table holds the jobs of one process. Its methods are safe for concurrent
// use.
type Table struct {
	opts Options

	mu     sync.Mutex
	closed bool
	next   map[string]int             // session → last job number
	jobs   map[string]map[string]*job // session → id → job
	wg     sync.WaitGroup
}

// New returns an empty table.
func New(opts Options) *Table {
	if opts.MaxPerSession <= 0 {
		opts.MaxPerSession = DefaultMaxBackground
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CheckEvery <= 0 {
		opts.CheckEvery = DefaultCheckEvery
	}
	return &Table{opts: opts, next: map[string]int{}, jobs: map[string]map[string]*job{}}
}

// Max is agent.max_background.
func (t *Table) Max() int { return t.opts.MaxPerSession }

// Start runs run as a new job of session in its own goroutine, with a
// context of its own (cancelled by Cancel, CancelSession and Close only).
// It refuses a job over the session's limit and after Close.
func (t *Table) Start(session, agent string, run Run) (Info, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return Info{}, ErrClosed
	}
	running := 0
	for _, j := range t.jobs[session] {
		if j.info.Status == Running {
			running++
		}
	}
	if running >= t.opts.MaxPerSession {
		return Info{}, &LimitError{Max: t.opts.MaxPerSession}
	}
	t.next[session]++
	id := "job-" + strconv.Itoa(t.next[session])
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{info: Info{Job: id, Agent: agent, Session: session, Status: Running, StartedAt: t.opts.Now().UTC()}, cancel: cancel, done: make(chan struct{})}
	if t.jobs[session] == nil {
		t.jobs[session] = map[string]*job{}
	}
	t.jobs[session][id] = j
	t.wg.Add(1)
	go t.run(ctx, j, run)
	if t.opts.Gone != nil {
		t.wg.Add(1)
		go t.watch(ctx, j)
	}
	return j.info, nil
}

// watch stops the jobs of j's session once the session is gone; it ends
// with j.
func (t *Table) watch(ctx context.Context, j *job) {
	defer t.wg.Done()
	tick := time.NewTicker(t.opts.CheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-j.done:
			return
		case <-tick.C:
			if t.opts.Gone(ctx, j.info.Session) {
				t.opts.Logger.Info("stopping the background jobs of a deleted session", "session", j.info.Session)
				t.CancelSession(j.info.Session)
				return
			}
		}
	}
}

func (t *Table) run(ctx context.Context, j *job, run Run) {
	defer t.wg.Done()
	out := run(ctx, j.info.Job)
	j.cancel()
	if out.Status == "" || out.Status == Running {
		out.Status = Failed
	}
	t.mu.Lock()
	j.info.Status, j.info.Result = out.Status, out.Result
	j.info.EndedAt = t.opts.Now().UTC()
	info := j.info
	_, live := t.jobs[info.Session][info.Job]
	t.prune(info.Session)
	t.mu.Unlock()
	close(j.done)
	if !live || t.opts.Report == nil {
		return // its session was deleted
	}
	t.opts.Report(Report{Session: info.Session, Job: info.Job, Agent: info.Agent, Status: info.Status,
		Text: ReportText(info, out.Reply), Reason: info.Reason, Wanted: func() bool {
			t.mu.Lock()
			defer t.mu.Unlock()
			return !j.seen
		}})
}

// prune forgets the oldest ended jobs of session beyond keepEnded; t.mu
// is held.
func (t *Table) prune(session string) {
	var ended []*job
	for _, j := range t.jobs[session] {
		if j.info.Status != Running {
			ended = append(ended, j)
		}
	}
	if len(ended) <= keepEnded {
		return
	}
	slices.SortFunc(ended, func(a, b *job) int { return a.info.EndedAt.Compare(b.info.EndedAt) })
	for _, j := range ended[:len(ended)-keepEnded] {
		delete(t.jobs[session], j.info.Job)
	}
}

// ReportText is the system-authored message a report puts in the history.
func ReportText(info Info, reply string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[scv] %s (%s) %s", info.Job, info.Agent, info.Status)
	if info.Reason != "" {
		fmt.Fprintf(&b, " (%s)", info.Reason)
	}
	reply = strings.TrimSpace(reply)
	if reply == "" {
		b.WriteString(", with no reply.")
	} else {
		cut := boundUTF8(reply, ReportReplyBytes)
		b.WriteString(": " + cut)
		if len(cut) < len(reply) {
			fmt.Fprintf(&b, " [… %d more bytes: agent_status {\"job\": %q} shows the whole result]", len(reply)-len(cut), info.Job)
		}
	}
	return b.String()
}

func boundUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (t *Table) lookup(session, id string) (*job, error) {
	j := t.jobs[session][id]
	if j == nil {
		return nil, fmt.Errorf("%w %q in this session: agent_status without `job` lists them", ErrUnknown, id)
	}
	return j, nil
}

// Get returns one job of session; an ended job read this way no longer
// needs its report.
func (t *Table) Get(session, id string) (Info, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, err := t.lookup(session, id)
	if err != nil {
		return Info{}, err
	}
	if j.info.Status != Running {
		j.seen = true
	}
	return j.info, nil
}

// List returns the jobs of session ("" for every session), running ones
// first, each group in start order.
func (t *Table) List(session string) []Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Info
	for s, m := range t.jobs {
		if session != "" && s != session {
			continue
		}
		for _, j := range m {
			out = append(out, j.info)
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		if ar, br := a.Status == Running, b.Status == Running; ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Session+a.Job, b.Session+b.Job)
	})
	return out
}

// Wait waits until the job ends or ctx is done, and returns what is known
// then (a running job when ctx ended first).
func (t *Table) Wait(ctx context.Context, session, id string) (Info, error) {
	t.mu.Lock()
	j, err := t.lookup(session, id)
	t.mu.Unlock()
	if err != nil {
		return Info{}, err
	}
	select {
	case <-j.done:
	case <-ctx.Done():
	}
	return t.Get(session, id)
}

// Cancel stops a running job; reason is what its report states. The job
// ends (and is reported) in its own goroutine: Wait for it.
func (t *Table) Cancel(session, id, reason string) (Info, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, err := t.lookup(session, id)
	if err != nil {
		return Info{}, err
	}
	if j.info.Status == Running {
		j.info.Reason = reason
		j.cancel()
	}
	return j.info, nil
}

// CancelSession stops every job of a deleted session and forgets them: no
// report is made. It waits for them to end.
func (t *Table) CancelSession(session string) {
	t.mu.Lock()
	m := t.jobs[session]
	delete(t.jobs, session)
	delete(t.next, session)
	t.mu.Unlock()
	for _, j := range m {
		j.cancel()
	}
	for _, j := range m {
		<-j.done
	}
}

// Close stops every job (their reports say the process stopped), refuses
// new ones, and waits for them and their reports.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	for _, m := range t.jobs {
		for _, j := range m {
			if j.info.Status == Running {
				j.info.Reason = "SCV stopped"
				j.cancel()
			}
		}
	}
	t.mu.Unlock()
	t.wg.Wait()
}
