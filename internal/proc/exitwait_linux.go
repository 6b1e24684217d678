package proc

import (
	"errors"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitLeader waits for cmd's leader to exit without holding an OS thread,
// then collects it with cmd.Wait, which then returns at once. os/exec's
// Wait alone blocks a thread in waitid for as long as the child runs: one
// thread per running call, each woken and scheduled by the runtime.
func waitLeader(cmd *exec.Cmd) error {
	awaitExit(cmd.Process.Pid)
	return cmd.Wait()
}

// awaitExit returns once the child pid has exited. The pid cannot be
// reused meanwhile: it is our child, tracked, so nobody but cmd.Wait
// reaps it. A pidfd is readable once its process has exited; the runtime's
// poller waits for that, parking the goroutine instead of a thread. When a
// pidfd cannot be had (a kernel before 5.3) it returns at once, and
// cmd.Wait blocks a thread as it always did.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// The check runs before every wait: the poller's readiness is reset
	// when the wait is prepared, so an exit that happened before it (even
	// before the file was registered) is seen only by asking the fd.
	_ = rc.Read(func(fd uintptr) bool { return exited(int(fd)) })
}

// exited says whether the pidfd fd is readable (its process has exited);
// an error other than EINTR counts as exited, so the caller goes on to
// cmd.Wait instead of waiting for a readiness that may never come.
func exited(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0
	}
}
