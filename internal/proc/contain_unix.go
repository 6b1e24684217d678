//go:build linux || darwin || freebsd

package proc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ScopeTagKey is the environment entry a child gets under the subreaper
// mechanism when its Spec has no Tag of its own: the orphans adopted from
// concurrent children are told apart by it.
const ScopeTagKey = "SCV_PROC_SCOPE"

// NewContainment sets up the mechanism opts.Want names (MechAuto: the best
// available). Under MechSubreaper this process becomes a child subreaper
// for the rest of its life.
func NewContainment(opts ContainOptions) (*Containment, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	want := opts.Want
	if want == "" {
		want = MechAuto
	}
	c := &Containment{log: log}
	var cgReason string
	if want == MechAuto || want == MechCgroup {
		plat, detail, err := newCgroupPlatform(opts.CgroupDir, opts.Instance)
		if err == nil {
			c.mech, c.detail, c.plat = MechCgroup, detail, plat
			c.plat.setLogger(log)
			return c, nil
		}
		if want == MechCgroup {
			return nil, fmt.Errorf("process tracking by cgroup: %w; use auto or subreaper", err)
		}
		cgReason = err.Error()
	}
	if want == MechAuto || want == MechSubreaper {
		err := BecomeSubreaper()
		if err == nil {
			c.mech = MechSubreaper
			c.detail = "this process adopts the orphans of its children"
			if cgReason != "" {
				c.detail += "; no cgroup: " + cgReason
			}
			if !opts.NoReaper {
				c.startReaper()
			}
			return c, nil
		}
		if want == MechSubreaper {
			return nil, fmt.Errorf("process tracking by subreaper: %w; use auto or group+tag", err)
		}
		if cgReason != "" {
			cgReason += "; "
		}
		cgReason += err.Error()
	}
	c.mech, c.detail = MechGroupTag, cgReason
	return c, nil
}

func (c *Containment) startReaper() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	r := &Reaper{}
	wg.Go(func() { r.Run(ctx) })
	c.stopReaper = func() { cancel(); wg.Wait() }
}

// scope is what one child's processes are tracked by. A nil scope (no
// Containment) does nothing and contains nothing.
type scope struct {
	c *Containment
	// leaf is the cgroup of the child (MechCgroup).
	leaf *leaf
	// tag is the KEY=VALUE entry the child's processes carry; under
	// MechSubreaper it tells adopted orphans apart.
	tag         string
	ownTag      bool
	leaderStart uint64
	// pooled says the leaf was made in advance.
	pooled bool
}

// open makes the scope of a child about to start.
func (c *Containment) open(s *Spec) (*scope, error) {
	if c == nil || c.mech == MechGroupTag {
		return nil, nil
	}
	sc := &scope{c: c, tag: s.Tag}
	switch c.mech {
	case MechCgroup:
		l, pooled, err := c.plat.takeLeaf()
		if err != nil {
			return nil, err
		}
		sc.leaf, sc.pooled = l, pooled
	case MechSubreaper:
		if sc.tag == "" {
			sc.tag, sc.ownTag = ScopeTagKey+"="+rand.Text(), true
		}
		c.claim(sc.tag)
	}
	return sc, nil
}

// contains says the scope holds all of the child's descendants, so neither
// the group stop nor the tag sweep is needed.
func (sc *scope) contains() bool { return sc != nil }

// prepare adjusts the command so that its process starts inside the scope.
func (sc *scope) prepare(cmd *exec.Cmd) {
	switch {
	case sc == nil:
	case sc.leaf != nil:
		sc.leaf.prepare(cmd)
	case sc.ownTag:
		cmd.Env = withTag(cmd.Env, sc.tag)
	}
}

// start starts cmd (registered for the Reaper) inside the scope and
// returns the Cmd that runs: a fresh one when the first start had to be
// retried.
func (sc *scope) start(cmd *exec.Cmd, confine func() error) (*exec.Cmd, error) {
	sc.prepare(cmd)
	err := startTracked(cmd, confine)
	if err != nil && sc != nil && sc.pooled && sc.leaf.stale() {
		// The leaf made in advance is gone: one made now, or the error
		// of making it.
		sc.pooled = false
		sc.leaf.closeFD()
		l, lerr := sc.c.plat.freshLeaf()
		if lerr != nil {
			sc.leaf.empty = true
			return cmd, lerr
		}
		sc.leaf = l
		cmd = sc.leaf.outsideCmd(cmd)
		sc.leaf.prepare(cmd)
		err = startTracked(cmd, confine)
	}
	if err != nil && sc != nil && sc.leaf != nil && sc.leaf.cloneUnsupported(err) {
		// A kernel without clone3 into a cgroup: start it outside and
		// move it in at once (what it forks before that escapes).
		cmd = sc.leaf.outsideCmd(cmd)
		if err = startTracked(cmd, confine); err == nil {
			sc.leaf.adopt(cmd.Process.Pid)
		}
	}
	if err == nil && sc != nil && sc.leaf == nil {
		// Only the subreaper's attribution of orphans needs it.
		sc.leaderStart, _ = StartTime(cmd.Process.Pid)
	}
	return cmd, err
}

// stop stops everything in the scope: TERM (and CONT), up to grace for it
// to go, then KILL.
func (sc *scope) stop(grace time.Duration) {
	switch {
	case sc == nil:
	case sc.leaf != nil:
		sc.leaf.stop(grace)
	default:
		sc.stopAdopted(grace)
	}
}

// kill KILLs everything in the scope at once (a deadline).
func (sc *scope) kill() {
	switch {
	case sc == nil:
	case sc.leaf != nil:
		sc.leaf.kill()
	default:
		for _, v := range sc.adopted() {
			_ = SignalVerified(v.PID, v.Start, syscall.SIGKILL)
		}
	}
}

// close releases the scope once its processes are stopped: the leaf is
// removed (in the background when it is known to be empty).
func (sc *scope) close() {
	switch {
	case sc == nil:
	case sc.leaf != nil:
		if err := sc.c.plat.releaseLeaf(sc.leaf); err != nil {
			sc.c.log.Warn("cannot remove a call's cgroup", "cgroup", sc.leaf.dir, "err", err)
		}
	default:
		sc.c.release(sc.tag)
	}
}

// stopAdopted stops the orphans this subreaper adopted from the scope's
// child, and everything below them, in rounds, since they may fork while
// being stopped.
func (sc *scope) stopAdopted(grace time.Duration) {
	for range 4 {
		victims := sc.adopted()
		if len(victims) == 0 {
			return
		}
		for _, v := range victims {
			_ = SignalVerified(v.PID, v.Start, syscall.SIGTERM)
			_ = SignalVerified(v.PID, v.Start, syscall.SIGCONT)
		}
		waitIdentsGone(victims, grace)
		for _, v := range victims {
			_ = SignalVerified(v.PID, v.Start, syscall.SIGKILL)
		}
		waitIdentsGone(victims, 2*time.Second)
	}
}

func waitIdentsGone(ids []Ident, d time.Duration) {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for anyIdentAlive(ids) {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		time.Sleep(min(step, left))
		step = min(step*2, 25*time.Millisecond)
	}
}

// adopted lists the scope's adopted orphans and their descendants. An
// orphan is a live child of this process that no Run or Start waits for,
// that is outside this process's own group (children started by other
// means stay in it) and was born after the scope's child. It belongs to
// the scope unless it carries the tag of another running scope: a
// process that scrubbed its environment belongs to the first scope that
// ends after its birth.
func (sc *scope) adopted() []Ident {
	self := os.Getpid()
	kids, err := childrenOf(self)
	if err != nil {
		sc.c.log.Warn("cannot list adopted processes", "err", err)
		return nil
	}
	pgid, _ := unix.Getpgid(self)
	var others []string
	for _, t := range sc.c.liveTags() {
		if t != sc.tag {
			others = append(others, t)
		}
	}
	var roots []procFact
	for _, k := range kids {
		if k.zombie || k.pgid == pgid || k.start < sc.leaderStart || isTracked(k.pid) {
			continue
		}
		if len(others) > 0 && carriesAny(k.pid, others) {
			continue
		}
		roots = append(roots, k)
	}
	return descendants(roots)
}

// descendants is roots and every live process below them.
func descendants(roots []procFact) []Ident {
	var out []Ident
	seen := map[int]bool{}
	queue := roots
	for len(queue) > 0 && len(out) < 100000 {
		k := queue[0]
		queue = queue[1:]
		if seen[k.pid] || k.zombie {
			continue
		}
		seen[k.pid] = true
		out = append(out, Ident{PID: k.pid, Start: k.start})
		below, _ := childrenOf(k.pid)
		queue = append(queue, below...)
	}
	return out
}

func isTracked(pid int) bool {
	tracked.Lock()
	defer tracked.Unlock()
	return tracked.pids[pid] > 0
}

// carriesAny says pid's environment holds one of the KEY=VALUE entries.
func carriesAny(pid int, tags []string) bool {
	env, err := environOf(pid)
	if err != nil {
		return false
	}
	for _, kv := range env {
		for _, t := range tags {
			if kv == t {
				return true
			}
		}
	}
	return false
}

// procFact is what the scope walk needs to know of a process.
type procFact struct {
	pid, pgid int
	start     uint64
	zombie    bool
}

var errNoCgroup = errors.New("no cgroup v2 on this system")

// envSplit splits a NUL-separated environment block.
func envSplit(b []byte) []string {
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 })
}

// Reconcile stops and removes the cgroups left by SCV processes that died
// with children running (under MechCgroup; otherwise it does nothing) and
// returns how many it removed.
func (c *Containment) Reconcile() (int, error) {
	if c == nil || c.mech != MechCgroup {
		return 0, nil
	}
	return c.plat.reconcile()
}
