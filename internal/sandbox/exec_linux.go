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

// confineAndExec restricts the calling thread (Landlock, then seccomp) and
// execs argv from it. Only this thread is confined, which is enough: execve
// ends every other thread, and the confinement is inherited by everything
// the command starts. The thread stays locked so the runtime never reuses
// it should the exec fail.
func confineAndExec(p Policy, argv []string) error {
	rep := Probe()
	if !rep.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, rep.Reason)
	}
	if missing := rep.Missing(p.Network); len(missing) > 0 && !p.BestEffort {
		return fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(missing, "; "))
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("command %q: %w", path, err)
		}
		path = lp
	}
	var filter []unix.SockFilter
	if rep.Seccomp {
		var err error
		filter, err = program(filterSpec{network: p.Network, tcp: rep.ABI >= minABINet, unixSockets: rep.ABI >= minABIUnix})
		if err != nil {
			return err
		}
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := landlockRestrict(p, rep); err != nil {
		return err
	}
	if filter != nil {
		if err := installFilter(filter); err != nil {
			return err
		}
	}
	err := syscall.Exec(path, argv, os.Environ())
	return fmt.Errorf("exec %s: %w", path, err)
}
