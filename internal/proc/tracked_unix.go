//go:build linux || darwin || freebsd

package proc

import (
	"os/exec"
	"sync"
)

// tracked holds the PIDs of children started through this package that
// os/exec will wait for itself. A Reaper never waits for these, so their
// exit statuses are not stolen. It is process-wide state by nature: the
// children of a process are a process-wide fact, and Run is a plain function.
var tracked = struct {
	sync.Mutex
	pids map[int]int
}{}

// startTracked starts cmd and registers its PID so that a Reaper in this
// process leaves it to cmd.Wait; untrack(pid) gives it up once cmd.Wait
// has returned. Children started in a subreaper process by other means
// than Run or Start may lose their exit status to the Reaper.
func startTracked(cmd *exec.Cmd) error {
	tracked.Lock()
	defer tracked.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if tracked.pids == nil {
		tracked.pids = map[int]int{}
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
