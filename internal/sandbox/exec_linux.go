package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// confiner checks that this kernel can enforce p (as rep describes it),
// derives p's rules now, in the caller, and returns the function that
// enforces them on the calling OS thread: no_new_privs, the Landlock
// ruleset, then the seccomp filter. That thread must be locked to its
// goroutine and never given back to the runtime (see Command.Confine).
func confiner(p Policy, rep Report) (func() error, error) {
	if !rep.Available {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, rep.Reason)
	}
	if missing := rep.Missing(p.Network); len(missing) > 0 && !p.BestEffort {
		return nil, fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(missing, "; "))
	}
	var filter []unix.SockFilter
	if rep.Seccomp {
		var err error
		filter, err = program(filterSpec{network: p.Network, tcp: rep.ABI >= minABINet, unixSockets: rep.ABI >= minABIUnix})
		if err != nil {
			return nil, err
		}
	}
	restrict, err := landlockLayers(p, rep)
	if err != nil {
		return nil, err
	}
	return func() error {
		// os/exec checks once per process whether pidfds work, with a
		// signal to this process; done here, before the thread is
		// confined, the check sees the kernel and not the sandbox.
		if self, err := os.FindProcess(os.Getpid()); err == nil {
			_ = self.Release()
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %w", err)
		}
		if err := restrict(); err != nil {
			return err
		}
		if filter != nil {
			if err := installFilter(filter); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// landlockLayers derives p's Landlock rules now and returns what
// restricts the calling thread with them: the cached read layer and a
// write layer of this command (cachedLandlock), or, when p's temp dir lies
// in a hidden path, one layer derived for this command alone.
func landlockLayers(p Policy, rep Report) (func() error, error) {
	restrict, ok, err := cachedLandlock(p, rep)
	if ok || err != nil {
		return restrict, err
	}
	gs, err := grants(p)
	if err != nil {
		return nil, err
	}
	return func() error { return landlockRestrict(rulesetAttr(p, rep), rep.ABI, gs) }, nil
}

// confineAndExec restricts the calling thread (Landlock, then seccomp) and
// execs argv from it. Only this thread is confined, which is enough: execve
// ends every other thread, and the confinement is inherited by everything
// the command starts. The thread stays locked so the runtime never reuses
// it should the exec fail.
func confineAndExec(p Policy, argv []string) error {
	confine, err := confiner(p, Probe())
	if err != nil {
		return err
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("command %q: %w", path, err)
		}
		path = lp
	}
	runtime.LockOSThread()
	if err := confine(); err != nil {
		return err
	}
	err = syscall.Exec(path, argv, os.Environ())
	return fmt.Errorf("exec %s: %w", path, err)
}
