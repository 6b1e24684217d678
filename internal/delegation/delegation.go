// Package delegation tracks delegated agent runs: the SCV_PARENT tag and
// SCV_DELEGATION_DEPTH every delegated process carries, the record file of
// each run under $SCV_HOME/run/delegations (PID + start time of both the
// agent and the owning SCV process, so a reused PID never matches), stopping
// a run's process group and every process still tagged with its handle
// (setsid escapees included), and reconciling records whose owner is gone.
package delegation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/proc"
)

// Environment variables every delegated process carries.
const (
	EnvParent = "SCV_PARENT"
	EnvDepth  = "SCV_DELEGATION_DEPTH"
)

// ChainSep separates the entries of an inherited SCV_PARENT chain.
const ChainSep = ","

// Tag is the SCV_PARENT value of a run: <instance>/<session>/<handle>,
// appended with ChainSep to an inherited chain.
func Tag(inherited, instance, session, handle string) string {
	t := instance + "/" + session + "/" + handle
	if inherited != "" {
		return inherited + ChainSep + t
	}
	return t
}

// Tagged says an SCV_PARENT value names handle anywhere in its chain.
func Tagged(parent, handle string) bool {
	for _, e := range strings.Split(parent, ChainSep) {
		if strings.HasSuffix(e, "/"+handle) {
			return true
		}
	}
	return false
}

// Depth is the delegation depth declared by env (SCV_DELEGATION_DEPTH): 0
// when unset; a value that is set but not a non-negative integer counts as
// 1, so a mangled variable still refuses what delegated runs may not do.
func Depth(env map[string]string) int {
	v, ok := env[EnvDepth]
	if !ok || strings.TrimSpace(v) == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 1
	}
	return n
}

// Options configure a Tracker.
type Options struct {
	// Dir is the record directory ($SCV_HOME/run/delegations).
	Dir string
	// CallDir holds the records of in-flight tool calls
	// ($SCV_HOME/run/calls); empty means "calls" beside Dir.
	CallDir string
	// OwnerPID is the owning SCV process; 0 means this process.
	OwnerPID int
	// Grace is the TERM→KILL delay; 0 means proc.DefaultGrace (2 s).
	Grace  time.Duration
	Logger *slog.Logger
}

// Tracker owns the records of one instance home. Its methods are safe for
// concurrent use.
type Tracker struct {
	dir        string
	callDir    string
	ownerPID   int
	ownerStart uint64
	grace      time.Duration
	log        *slog.Logger

	mu      sync.Mutex
	running map[string]bool
	reaped  atomic.Int64
}

// New returns a tracker for opts.Dir.
func New(opts Options) (*Tracker, error) {
	if opts.Dir == "" {
		return nil, errors.New("delegation tracker: no record directory")
	}
	pid := opts.OwnerPID
	if pid == 0 {
		pid = os.Getpid()
	}
	start, err := proc.StartTime(pid)
	if err != nil {
		return nil, fmt.Errorf("delegation tracker: %w", err)
	}
	if opts.CallDir == "" {
		opts.CallDir = filepath.Join(filepath.Dir(opts.Dir), "calls")
	}
	t := &Tracker{dir: opts.Dir, callDir: opts.CallDir, ownerPID: pid, ownerStart: start, grace: opts.Grace, log: opts.Logger, running: map[string]bool{}}
	if t.grace <= 0 {
		t.grace = proc.DefaultGrace
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t, nil
}

// Dir is the record directory.
func (t *Tracker) Dir() string { return t.dir }

// NewHandle reserves a fresh handle <agent>-<6 hex> no record uses.
func (t *Tracker) NewHandle(agent string) (string, error) {
	for range 16 {
		h, err := newHandle(agent)
		if err != nil {
			return "", err
		}
		t.mu.Lock()
		taken := t.running[h]
		t.mu.Unlock()
		if _, err := os.Stat(t.path(h)); !taken && errors.Is(err, os.ErrNotExist) {
			return h, nil
		}
	}
	return "", errors.New("new handle: no free handle after 16 tries")
}

// Start records a run whose agent process r.PID has just started. It fills
// the agent's start time, the owner identity and StartedAt.
func (t *Tracker) Start(r Record) error {
	if !ValidHandle(r.Handle) {
		return fmt.Errorf("record delegation: invalid handle %q", r.Handle)
	}
	if st, err := proc.StartTime(r.PID); err == nil {
		r.PIDStart = st
	}
	r.OwnerPID, r.OwnerStart = t.ownerPID, t.ownerStart
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now().UTC()
	}
	t.mu.Lock()
	t.running[r.Handle] = true
	t.mu.Unlock()
	return t.write(r)
}

// Finish ends a run: it stops what is left of its group and every process
// still tagged with its handle, removes the record and says whether
// `scv agents kill` had stopped it. Call it when the run ends or is
// abandoned.
func (t *Tracker) Finish(handle string) (killed bool) {
	r, err := t.Read(handle)
	if err == nil {
		killed = r.Killed
		t.stop(r)
	} else {
		t.sweep(handle)
	}
	t.remove(handle)
	t.mu.Lock()
	delete(t.running, handle)
	t.mu.Unlock()
	return killed
}

// End ends a run whose processes were all stopped with it (its
// proc.Containment scope): it removes the record, without the tag sweep of
// every process Finish does, and says whether `scv agents kill` had
// stopped it.
func (t *Tracker) End(handle string) (killed bool) {
	if r, err := t.Read(handle); err == nil {
		killed = r.Killed
	}
	t.remove(handle)
	t.mu.Lock()
	delete(t.running, handle)
	t.mu.Unlock()
	return killed
}

// Sweep stops every process tagged with handle (TERM, then KILL after the
// grace period) and returns how many it signalled.
func (t *Tracker) Sweep(handle string) int { return t.sweep(handle) }

// Counts are the numbers `scv status` shows.
type Counts struct {
	Running       int   `json:"running"`
	OrphansReaped int64 `json:"orphans_reaped"`
}

// Counts returns this process's running runs and the orphans it reaped.
func (t *Tracker) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Counts{Running: len(t.running), OrphansReaped: t.reaped.Load()}
}

// Entry is a listed record.
type Entry struct {
	Record
	// Orphan says the owning SCV process is gone.
	Orphan bool `json:"orphan"`
	// AgentAlive says the agent process itself still runs.
	AgentAlive bool `json:"agent_alive"`
}

// List returns the records of running delegations, from any SCV process of
// this home; with all, also orphans awaiting cleanup.
func (t *Tracker) List(all bool) ([]Entry, error) {
	recs, _, err := t.readAll()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, r := range recs {
		e := Entry{Record: r, Orphan: !proc.Alive(r.OwnerPID, r.OwnerStart), AgentAlive: proc.Alive(r.PID, r.PIDStart)}
		if e.Orphan && !all {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Kill stops the run handle, whoever owns it: the record is marked killed
// (so its owner reports it cancelled), then the group and the tagged
// processes are stopped. An orphan's record is removed too; a live owner
// removes its own when its run returns.
func (t *Tracker) Kill(ctx context.Context, handle string) error {
	r, err := t.Read(handle)
	if err != nil {
		return err
	}
	ownerAlive := proc.Alive(r.OwnerPID, r.OwnerStart)
	// Mark only a record that still exists: an owner that has just finished
	// removed it, and rewriting it would leave a stale record behind.
	if _, statErr := os.Stat(t.path(handle)); ownerAlive && statErr == nil {
		r.Killed = true
		if err := t.write(r); err != nil {
			return err
		}
	}
	t.stop(r)
	if !ownerAlive {
		t.remove(handle)
	}
	return ctx.Err()
}

// KillOrphans stops and removes every orphan; it is Reconcile without
// counting towards the daemon's figures.
func (t *Tracker) KillOrphans(ctx context.Context) (int, error) {
	return t.reconcile(ctx)
}

// Reconcile stops the runs of every record whose owning SCV process is gone
// (its group, then its tagged processes) and removes those records; it
// does the same for the records of in-flight tool calls (BeginCall). The
// daemon calls it at start-up and every 60 seconds, `scv server --stdio`
// once at start. The count is of delegations only (what `scv status`
// reports); stopped calls are logged.
func (t *Tracker) Reconcile(ctx context.Context) (int, error) {
	n, err := t.reconcile(ctx)
	t.reaped.Add(int64(n))
	return n, err
}

func (t *Tracker) reconcile(ctx context.Context) (int, error) {
	calls, cerr := t.reconcileCalls()
	if calls > 0 {
		t.log.Info("stopped the processes of calls whose SCV process died", "count", calls)
	}
	n, err := t.reconcileDelegations(ctx)
	return n, errors.Join(err, cerr)
}

func (t *Tracker) reconcileDelegations(ctx context.Context) (int, error) {
	recs, bad, err := t.readAll()
	if err != nil {
		return 0, err
	}
	for _, b := range bad {
		t.log.Warn("unreadable delegation record", "file", b)
	}
	n := 0
	for _, r := range recs {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if proc.Alive(r.OwnerPID, r.OwnerStart) {
			continue
		}
		t.log.Info("reaping orphaned delegation", "handle", r.Handle, "agent", r.Agent, "owner_pid", r.OwnerPID)
		t.stop(r)
		t.remove(r.Handle)
		n++
	}
	return n, nil
}

// stop stops r's process group (only while its leader is verifiably the
// recorded process) and then everything tagged with its handle.
func (t *Tracker) stop(r Record) {
	if r.PID > 1 && r.PIDStart != 0 && proc.Alive(r.PID, r.PIDStart) {
		_ = proc.SignalVerified(r.PID, r.PIDStart, syscall.SIGTERM)
		proc.StopGroup(r.PID, t.grace)
	}
	t.sweep(r.Handle)
}

// sweep signals every live process tagged with handle: TERM (and CONT),
// up to the grace period for them to go, then KILL; repeated a few rounds
// so processes forked meanwhile are caught too.
func (t *Tracker) sweep(handle string) int {
	total := 0
	for round := 0; round < 3; round++ {
		victims := scanTagged(handle)
		if len(victims) == 0 {
			return total
		}
		total += len(victims)
		for _, v := range victims {
			_ = proc.SignalVerified(v.pid, v.start, syscall.SIGTERM)
			_ = proc.SignalVerified(v.pid, v.start, syscall.SIGCONT)
		}
		deadline := time.Now().Add(t.grace)
		for time.Now().Before(deadline) && anyAlive(victims) {
			time.Sleep(20 * time.Millisecond)
		}
		for _, v := range victims {
			_ = proc.SignalVerified(v.pid, v.start, syscall.SIGKILL)
		}
		waitGone(victims, 500*time.Millisecond)
	}
	return total
}

type ident struct {
	pid   int
	start uint64
}

// scanTagged finds the live processes whose environment carries an
// SCV_PARENT naming handle, with their start times.
func scanTagged(handle string) []ident {
	var out []ident
	for _, id := range proc.EnvTagged(EnvParent, func(v string) bool { return Tagged(v, handle) }) {
		out = append(out, ident{pid: id.PID, start: id.Start})
	}
	return out
}

func anyAlive(vs []ident) bool {
	for _, v := range vs {
		if proc.Alive(v.pid, v.start) {
			return true
		}
	}
	return false
}

func waitGone(vs []ident, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && anyAlive(vs) {
		time.Sleep(10 * time.Millisecond)
	}
}
