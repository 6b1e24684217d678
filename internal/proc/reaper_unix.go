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
