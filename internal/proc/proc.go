// Package proc runs child processes with full process-group hygiene: every
// child leads a new process group; cancellation sends TERM to the group,
// waits up to a grace period and KILLs what is left; a deadline KILLs at
// once; after the leader exits the rest of its group is stopped and output
// draining is bounded, so a background child cannot keep a call alive. A
// Containment (Spec.Contain) holds every descendant of a child, even one
// that left the group and cleared its environment, in a cgroup v2 leaf or,
// as a fallback, among the orphans a subreaper adopts, and stops them all
// at the child's end. It also owns bounded output capture, process
// identity (PID + start time), the environment-tag scan and reaping for
// subreapers.
//
// Linux reads /proc and uses pidfds; macOS and FreeBSD read the kernel's
// process table through sysctl and environments through ps(1). A child
// subreaper exists on Linux (prctl) and FreeBSD (procctl); on macOS
// BecomeSubreaper reports that it is unavailable.
package proc

import (
	"context"
	"io"
	"os"
	"time"
)

// DefaultGrace is how long a group gets between TERM and KILL.
const DefaultGrace = 2 * time.Second

// Spec describes one child process.
type Spec struct {
	// Path is the executable (absolute, or resolved by the caller).
	Path string
	// Args are argv[1:].
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment of the child (nil means empty).
	Env []string
	// Stdin, when set, is the child's standard input (a file, so no copy
	// goroutine can outlive the call); nil means /dev/null.
	Stdin *os.File
	// Stdout and Stderr receive the child's output as it arrives. When both
	// are the same writer the streams are combined. nil discards. Writers are
	// called from at most one goroutine each; a shared writer must be safe for
	// concurrent use (Capture is).
	Stdout io.Writer
	Stderr io.Writer
	// Timeout, when > 0, is the deadline: reaching it KILLs the group at once.
	Timeout time.Duration
	// Grace is the TERM→KILL delay on cancellation; 0 means DefaultGrace.
	Grace time.Duration
	// OnStart, if set, is called with the leader's PID right after it starts.
	OnStart func(pid int)
	// AfterExit, if set, is called after the leader exited and its group was
	// stopped, before Run returns (used for tag sweeps of setsid escapees).
	AfterExit func()
	// Tag, when non-empty, is a "KEY=VALUE" entry added to the child's
	// environment (replacing any entry of the same key). Descendants inherit it, so after the group is stopped,
	// processes still carrying it (those that left the group with setsid)
	// are stopped the same way, before AfterExit. It is cooperative: a
	// process that scrubs its environment escapes it.
	Tag string
	// Contain, when set, holds every descendant of the child in one scope
	// (a cgroup v2 leaf, or the orphans this subreaper adopts from it),
	// which is stopped as a whole when the child ends; the group stop and
	// the tag sweep are then not needed and not done. nil keeps the
	// process group and the tag alone.
	Contain *Containment
	// Confine, when set, restricts the calling OS thread (a sandbox's
	// Landlock and seccomp rules): the child is started from a fresh
	// thread locked for it that calls Confine first and is discarded
	// afterwards, so the child is confined from its first instruction and
	// no other goroutine ever runs confined. An error means nothing was
	// started.
	Confine func() error
}

// Ident is a process by PID and start time (see StartTime).
type Ident struct {
	PID   int
	Start uint64
}

// Result is how a child ended.
type Result struct {
	// ExitCode is nil when the process was killed by a signal.
	ExitCode *int
	// Signal names the terminating signal, if any (e.g. "killed").
	Signal string
	// TimedOut says the deadline was reached and the group KILLed.
	TimedOut bool
	// Cancelled says ctx was cancelled and the group stopped.
	Cancelled bool
	// Duration is the wall time from start to the end of draining.
	Duration time.Duration
}

// Run starts the child described by s with stdin /dev/null, in a new process
// group, and waits for it as the package doc describes. The error is non-nil
// only when the child could not be started (or, never in practice, waited
// for). When ctx is already done nothing is started and the Result says
// Cancelled.
func Run(ctx context.Context, s Spec) (Result, error) {
	return run(ctx, s)
}
