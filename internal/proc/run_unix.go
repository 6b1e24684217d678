//go:build linux || darwin || freebsd

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// drainAfterStop bounds how long output is still read once the group has
// been stopped: only processes that left the group (setsid) can still hold
// the pipe then, and what the stopped members wrote is already buffered.
const drainAfterStop = 250 * time.Millisecond

// command is the child of s as an exec.Cmd leading a new process group,
// with exactly the environment s gives (plus its tag), and s's grace period.
func command(s Spec) (*exec.Cmd, time.Duration) {
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	cmd := &exec.Cmd{
		Path:        s.Path,
		Args:        append([]string{s.Path}, s.Args...),
		Dir:         s.Dir,
		Env:         s.Env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean "inherit ours"
	}
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	}
	if s.Tag != "" {
		cmd.Env = withTag(cmd.Env, s.Tag)
	}
	return cmd, grace
}

func run(ctx context.Context, s Spec) (Result, error) {
	cmd, grace := command(s)
	if ctx.Err() != nil {
		return Result{Cancelled: true}, nil
	}
	out, err := attachOutputs(cmd, s.Stdout, s.Stderr)
	if err != nil {
		return Result{}, err
	}
	sc, err := s.Contain.open(&s)
	if err != nil {
		out.closeWriters()
		out.closeReaders()
		return Result{}, fmt.Errorf("start %s: %w", s.Path, err)
	}
	defer sc.close()
	started := time.Now()
	cmd, err = sc.start(cmd, s.Confine)
	out.closeWriters()
	if err != nil {
		out.closeReaders()
		return Result{}, fmt.Errorf("start %s: %w", s.Path, err)
	}
	pid := cmd.Process.Pid
	defer untrack(pid)
	drained := out.copyAll()
	if s.OnStart != nil {
		s.OnStart(pid)
	}

	res, waitErr := supervise(ctx, cmd, s.Timeout, grace, sc)
	exited := time.Now()
	// The leader is gone; whatever it left goes too.
	cleanUp(pid, s.Tag, grace, sc)
	if s.AfterExit != nil {
		s.AfterExit()
	}
	// Output still buffered in the pipe is read in any case; after a normal
	// exit an escapee holding the pipe gets up to grace from the exit.
	drainUntil := time.Now().Add(min(grace, drainAfterStop))
	if !res.TimedOut && !res.Cancelled && exited.Add(grace).After(drainUntil) {
		drainUntil = exited.Add(grace)
	}
	out.drain(drained, drainUntil)
	res.Duration = time.Since(started)
	if waitErr != nil {
		return res, waitErr
	}
	return res, nil
}

// withTag returns env with tag appended and any other entry of the tag's
// key removed (an inherited tag of an outer run would otherwise shadow it).
func withTag(env []string, tag string) []string {
	key, _, _ := strings.Cut(tag, "=")
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, tag)
}

// cleanUp stops what a leader that has exited left behind: its scope when
// it has one, else the rest of its group, then the processes carrying its
// tag.
func cleanUp(pgid int, tag string, grace time.Duration, sc *scope) {
	if sc.contains() {
		sc.stop(grace)
		return
	}
	StopGroup(pgid, grace)
	if tag != "" {
		StopTagged(tag, grace)
	}
}

// supervise waits for the leader, enforcing the deadline (KILL the group,
// and the scope, at once) and cancellation (TERM, grace, KILL).
func supervise(ctx context.Context, cmd *exec.Cmd, timeout, grace time.Duration, sc *scope) (Result, error) {
	pgid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- waitLeader(cmd) }()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var res Result
	var err error
	select {
	case err = <-waited:
	case <-deadline:
		res.TimedOut = true
		killGroup(pgid)
		sc.kill()
		_ = cmd.Process.Kill() // in case the leader left its group
		err = <-waited
	case <-ctx.Done():
		res.Cancelled = true
		if sc.contains() {
			sc.stop(grace)
		} else {
			StopGroup(pgid, grace)
		}
		_ = cmd.Process.Kill()
		err = <-waited
	}
	st := cmd.ProcessState
	if st == nil {
		return res, fmt.Errorf("wait for %s: %w", cmd.Path, err)
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		res.Signal = ws.Signal().String()
	} else {
		code := ws.ExitStatus()
		res.ExitCode = &code
	}
	return res, nil
}

// outputs are the pipes between the child and the caller's writers. We make
// them ourselves rather than letting os/exec do it so that waiting for the
// leader and draining its output are separate steps with separate bounds.
type outputs struct {
	readers []*os.File
	writers []*os.File
	dests   []io.Writer
}

func attachOutputs(cmd *exec.Cmd, stdout, stderr io.Writer) (*outputs, error) {
	o := &outputs{}
	pipe := func(w io.Writer) (*os.File, error) {
		pr, pw, err := os.Pipe()
		if err != nil {
			o.closeReaders()
			o.closeWriters()
			return nil, fmt.Errorf("output pipe: %w", err)
		}
		o.readers = append(o.readers, pr)
		o.writers = append(o.writers, pw)
		o.dests = append(o.dests, w)
		return pw, nil
	}
	var err error
	if stdout != nil {
		if cmd.Stdout, err = pipe(stdout); err != nil {
			return nil, err
		}
	}
	if stderr != nil {
		if sameWriter(stdout, stderr) {
			cmd.Stderr = cmd.Stdout
		} else if cmd.Stderr, err = pipe(stderr); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// sameWriter compares two writers without panicking on uncomparable types.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func (o *outputs) closeWriters() {
	for _, f := range o.writers {
		_ = f.Close()
	}
	o.writers = nil
}

func (o *outputs) closeReaders() {
	for _, f := range o.readers {
		_ = f.Close()
	}
	o.readers = nil
}

// copyAll copies every pipe to its writer until EOF or a read deadline; the
// returned channel is closed when all copies have ended.
func (o *outputs) copyAll() <-chan struct{} {
	done := make(chan struct{})
	n := len(o.readers)
	ended := make(chan struct{}, n)
	for i := range o.readers {
		go func(r *os.File, w io.Writer) {
			copyOut(w, r)
			ended <- struct{}{}
		}(o.readers[i], o.dests[i])
	}
	go func() {
		for range n {
			<-ended
		}
		close(done)
	}()
	return done
}

// copyOut reads r until it ends. A failing writer does not stop the reading,
// so the child never blocks on a full pipe.
func copyOut(w io.Writer, r *os.File) {
	buf := make([]byte, 32*1024)
	failed := false
	for {
		n, err := r.Read(buf)
		if n > 0 && !failed {
			if _, werr := w.Write(buf[:n]); werr != nil {
				failed = true
			}
		}
		if err != nil {
			return
		}
	}
}

// drain waits for the copies to end by themselves until the given time, then
// interrupts the reads (a process outside the group may still hold the pipe)
// and closes the pipes.
func (o *outputs) drain(done <-chan struct{}, until time.Time) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, r := range o.readers {
			if err := r.SetReadDeadline(time.Now()); err != nil && !errors.Is(err, os.ErrClosed) {
				_ = r.Close()
			}
		}
		<-done
	}
	o.closeReaders()
}
