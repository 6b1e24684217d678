//go:build linux || darwin || freebsd

package proc

import (
	"os/exec"
	"runtime"
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
// than Run or Start may lose their exit status to the Reaper. A non-nil
// confine is Spec.Confine.
func startTracked(cmd *exec.Cmd, confine func() error) error {
	tracked.Lock()
	defer tracked.Unlock()
	if err := startConfined(cmd, confine); err != nil {
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

// startConfined starts cmd, from a thread of its own confined by confine
// when that is set. The goroutine locks its thread and exits without
// unlocking it, so the runtime ends the thread instead of reusing it; and
// the runtime never clones a thread it needs from a locked one (it asks
// its template thread), so the confinement reaches only the child, which
// inherits it from the thread that forked it. The main thread is not
// used: the runtime would park it for good, confined, instead of ending
// it, so a goroutine that lands there holds it while another one starts.
func startConfined(cmd *exec.Cmd, confine func() error) error {
	if confine == nil {
		return cmd.Start()
	}
	done := make(chan error, 1)
	go startOnThread(cmd, confine, done)
	return <-done
}

// startOnThread is startConfined's goroutine; it sends the start's error
// to done.
func startOnThread(cmd *exec.Cmd, confine func() error, done chan<- error) {
	runtime.LockOSThread()
	if onMainThread() {
		inner := make(chan error, 1)
		go startOnThread(cmd, confine, inner) // cannot land here while we hold the thread
		err := <-inner
		runtime.UnlockOSThread()
		done <- err
		return
	}
	// Never unlocked: the thread ends with this goroutine.
	if err := confine(); err != nil {
		done <- err
		return
	}
	done <- cmd.Start()
}
