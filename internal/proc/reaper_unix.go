//go:build linux || darwin || freebsd

package proc

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reapGap is the least time between two scans started by SIGCHLD. Every
// exit of a child sends one, the children Run and Start wait for
// themselves included (most of them), and each scan reads the children
// files of every thread of this process: a burst of exits then costs one
// scan per gap, not one per exit. A zombie is already gone for everything
// that waits for processes to end (Alive), so reaping it a little later
// delays nothing but the release of its PID.
const reapGap = 100 * time.Millisecond

// Run reaps on SIGCHLD (at most once per reapGap) and every Interval
// until ctx is done.
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
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		r.ReapOnce()
		gap.Reset(reapGap)
		select {
		case <-ctx.Done():
			return
		case <-sig:
			// The exits that come before the gap ends are seen by the
			// next scan; their signals coalesce into the one pending.
			select {
			case <-ctx.Done():
				return
			case <-gap.C:
			}
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
