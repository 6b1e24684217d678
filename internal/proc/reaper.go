package proc

import (
	"errors"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrGone says the process no longer exists or its PID now belongs to a
// different process (the start time differs).
var ErrGone = errors.New("process is gone or its PID was reused")

// Reaper collects exited children that nobody else waits for: descendants
// adopted by a subreaper. Children started through Run or StartTracked are
// left to os/exec.
type Reaper struct {
	// Interval is the period of the rescan that backs up SIGCHLD
	// (0 means 5 s).
	Interval time.Duration
	// OnReap, if set, is called for each reaped child.
	OnReap func(pid int, status syscall.WaitStatus)

	reaped atomic.Int64
}

// Reaped is how many children this Reaper has collected.
func (r *Reaper) Reaped() int64 { return r.reaped.Load() }
