package proc

import (
	"io"
	"sync/atomic"
	"time"
)

// Child is a long-lived child started by Start: it leads its own process
// group and talks over pipes (an MCP server on stdio, for instance). Its
// end, by itself or through Stop, is handled like the end of a Run: the rest
// of the group is stopped, then every process still carrying the tag.
type Child struct {
	// Stdin is the child's standard input. Closing it is the polite way to
	// ask a server to exit.
	Stdin io.WriteCloser
	// Stdout is the child's standard output. It stays readable after the
	// child exited until everything it wrote has been read.
	Stdout io.ReadCloser

	pid     int
	grace   time.Duration
	exited  chan struct{} // closed as soon as the leader has been waited for
	done    chan struct{}
	res     Result
	stopped atomic.Bool
}

// PID is the leader's process ID (and the group's ID).
func (c *Child) PID() int { return c.pid }

// Done is closed once the leader has exited and its group, its tagged
// escapees and its stderr have been dealt with.
func (c *Child) Done() <-chan struct{} { return c.done }

// Result is how the child ended; it waits for Done. Cancelled says Stop
// ended it (a child that had exited by itself is not Cancelled).
func (c *Child) Result() Result {
	<-c.done
	return c.res
}

// Start starts the child described by s and returns at once. Its stdin and
// stdout are the Child's pipes; s.Stderr, when set, receives its standard
// error (s.Stdout, s.Timeout and s.OnStart are not used). When the leader
// exits, whatever is left of its group is stopped (TERM, grace, KILL), then
// every process still carrying s.Tag, then s.AfterExit runs and Done closes.
func Start(s Spec) (*Child, error) {
	return start(s)
}

// Stop ends the child: TERM to its group, up to the grace period, then KILL;
// it returns once Done is closed. Stopping a child that already ended does
// nothing.
func (c *Child) Stop() {
	select {
	case <-c.exited:
		// It ended by itself; only its clean-up may still be running.
		<-c.done
		return
	default:
	}
	c.stopped.Store(true)
	StopGroup(c.pid, c.grace)
	<-c.done
}
