package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tracked holds the PIDs of children started through this package that
// os/exec will wait for itself. A Reaper never waits for these, so their
// exit statuses are not stolen. It is process-wide state by nature: the
// children of a process are a process-wide fact, and Run is a plain function.
var tracked = struct {
	sync.Mutex
	pids map[int]int
}{pids: map[int]int{}}

// StartTracked starts cmd and registers its PID so that a Reaper in this
// process leaves it to cmd.Wait. Children started in a subreaper process by
// other means than Run or StartTracked may lose their exit status to the
// Reaper. Call the returned function after cmd.Wait has returned.
func StartTracked(cmd *exec.Cmd) (untrackFn func(), err error) {
	if err := startTracked(cmd); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	return func() { untrack(pid) }, nil
}

func startTracked(cmd *exec.Cmd) error {
	tracked.Lock()
	defer tracked.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	tracked.pids[cmd.Process.Pid]++
	return nil
}

func untrack(pid int) {
	tracked.Lock()
	defer tracked.Unlock()
	if tracked.pids[pid]--; tracked.pids[pid] <= 0 {
		delete(tracked.pids, pid)
	}
}

// BecomeSubreaper makes this process a child subreaper: orphaned descendants
// are reparented to it instead of to init, so it must reap them (Reaper).
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}

// Run reaps on every SIGCHLD and every Interval until ctx is done.
func (r *Reaper) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		r.ReapOnce()
		select {
		case <-ctx.Done():
			return
		case <-sig:
		case <-tick.C:
		}
	}
}

// ReapOnce collects every zombie child of this process that is not tracked
// and returns how many it collected.
func (r *Reaper) ReapOnce() int {
	n := 0
	for _, pid := range zombieChildren(os.Getpid()) {
		tracked.Lock()
		if tracked.pids[pid] > 0 {
			tracked.Unlock()
			continue
		}
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		tracked.Unlock()
		if err != nil || got != pid {
			continue
		}
		n++
		r.reaped.Add(1)
		if r.OnReap != nil {
			r.OnReap(pid, syscall.WaitStatus(ws))
		}
	}
	return n
}

// zombieChildren lists the PIDs whose parent is ppid and that have exited
// but were not waited for. A zombie keeps its PID until it is reaped, so a
// PID found here cannot be reused by a new child before Wait4 sees it.
func zombieChildren(ppid int) []int {
	names, err := readProcNames()
	if err != nil {
		return nil
	}
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err == nil && s.ppid == ppid && s.state == 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func readProcNames() ([]string, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return names, nil
}
