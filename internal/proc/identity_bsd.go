//go:build darwin || freebsd

package proc

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// kinfo is what this package reads of the kernel's process table entry
// (sysctl kern.proc.*): the same facts /proc/<pid>/stat gives on Linux.
type kinfo struct {
	pid, ppid, pgid int
	// start is the start time in microseconds since the epoch.
	start  uint64
	zombie bool
}

// StartTime is the start time of pid in microseconds since the epoch, from
// the kernel's process table. Together with the PID it identifies a process
// even after the PID is reused.
func StartTime(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("start time of pid %d: invalid pid", pid)
	}
	k, err := procInfo(pid)
	if err != nil {
		return 0, fmt.Errorf("start time of pid %d: %w", pid, err)
	}
	return k.start, nil
}

// Alive says the process pid with the given start time still runs. A zombie
// (exited, not yet reaped) is not alive.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	k, err := procInfo(pid)
	return err == nil && k.start == start && !k.zombie
}

// SignalVerified sends sig to pid only if pid still has the given start
// time. These systems have no pidfd, so the check and the signal are two
// steps: the window between them is tiny but not zero.
func SignalVerified(pid int, start uint64, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("signal pid %d: invalid pid", pid)
	}
	if !Alive(pid, start) {
		return ErrGone
	}
	return signalErr(pid, unix.Kill(pid, sig))
}

// groupLive says some process of group pgid is still running; zombies do
// not count. When the process table cannot be read, any member counts.
func groupLive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	members, err := groupInfo(pgid)
	if err != nil {
		return true
	}
	for _, k := range members {
		if k.pgid == pgid && !k.zombie {
			return true
		}
	}
	return false
}

// zombieChildren lists the PIDs whose parent is ppid and that have exited
// but were not waited for.
func zombieChildren(ppid int) []int {
	all, err := allInfo()
	if err != nil {
		return nil
	}
	var out []int
	for _, k := range all {
		if k.ppid == ppid && k.zombie {
			out = append(out, k.pid)
		}
	}
	return out
}
