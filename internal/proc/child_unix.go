//go:build linux || darwin || freebsd

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func start(s Spec) (*Child, error) {
	cmd, grace := command(s)
	// Our own pipes, not os/exec's: Wait would close its pipes as soon as
	// the leader exits, dropping what it wrote last.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	errs, err := attachOutputs(cmd, nil, s.Stderr)
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	sc, err := s.Contain.open(&s)
	if err == nil {
		cmd, err = sc.start(cmd, s.Confine)
	}
	inR.Close()
	outW.Close()
	errs.closeWriters()
	if err != nil {
		sc.close()
		inW.Close()
		outR.Close()
		errs.closeReaders()
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	c := &Child{Stdin: inW, Stdout: outR, pid: cmd.Process.Pid, grace: grace, exited: make(chan struct{}), done: make(chan struct{})}
	drained := errs.copyAll()
	go c.watch(cmd, s, errs, drained, sc)
	return c, nil
}

// watch waits for the leader, then cleans up after it as Run does.
func (c *Child) watch(cmd *exec.Cmd, s Spec, errs *outputs, drained <-chan struct{}, sc *scope) {
	started := time.Now()
	waitErr := waitLeader(cmd)
	c.res.Cancelled = c.stopped.Load()
	close(c.exited)
	untrack(c.pid)
	if st := cmd.ProcessState; st != nil {
		ws, _ := st.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			c.res.Signal = ws.Signal().String()
		} else {
			code := ws.ExitStatus()
			c.res.ExitCode = &code
		}
	} else if waitErr != nil {
		c.res.Signal = waitErr.Error()
	}
	cleanUp(c.pid, s.Tag, c.grace, sc)
	if s.AfterExit != nil {
		s.AfterExit()
	}
	errs.drain(drained, time.Now().Add(min(c.grace, drainAfterStop)))
	sc.close()
	c.res.Duration = time.Since(started)
	close(c.done)
}
