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
// adopted by a subreaper. Children started through Run or Start are left
// to os/exec.
type Reaper struct {
	// Interval is the period of the rescan that backs up SIGCHLD
	// (0 means 5 s).
	Interval time.Duration
	// OnReap, if set, is called for each reaped child.
	OnReap func(pid int, status syscall.WaitStatus)

	// reaped counts the children collected; the reaper tests read it to
	// tell a Reaper that collected from one that never ran.
	reaped atomic.Int64
}
