package proc

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// psEnvFlag makes ps(1) print each process's environment after its command.
const psEnvFlag = "-E"

// sZomb is p_stat of a zombie (sys/proc.h).
const sZomb = 5

func procInfo(pid int) (kinfo, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if errors.Is(err, unix.EIO) || errors.Is(err, unix.ESRCH) {
		// The kernel answers an unknown PID with an empty entry.
		return kinfo{}, ErrGone
	}
	if err != nil {
		return kinfo{}, fmt.Errorf("sysctl kern.proc.pid: %w", err)
	}
	if int(k.Proc.P_pid) != pid {
		return kinfo{}, ErrGone
	}
	return fromKinfoProc(k), nil
}

func groupInfo(pgid int) ([]kinfo, error) { return kinfoSlice("kern.proc.pgrp", pgid) }

func allInfo() ([]kinfo, error) { return kinfoSlice("kern.proc.all") }

func kinfoSlice(name string, args ...int) ([]kinfo, error) {
	ks, err := unix.SysctlKinfoProcSlice(name, args...)
	if err != nil {
		return nil, fmt.Errorf("sysctl %s: %w", name, err)
	}
	out := make([]kinfo, 0, len(ks))
	for i := range ks {
		out = append(out, fromKinfoProc(&ks[i]))
	}
	return out, nil
}

func fromKinfoProc(k *unix.KinfoProc) kinfo {
	st := k.Proc.P_starttime
	return kinfo{
		pid: int(k.Proc.P_pid), ppid: int(k.Eproc.Ppid), pgid: int(k.Eproc.Pgid),
		start:  uint64(st.Sec)*1_000_000 + uint64(st.Usec),
		zombie: k.Proc.P_stat == sZomb,
	}
}

// BecomeSubreaper is unavailable on macOS: the kernel has no child
// subreaper, so orphaned descendants go to launchd. SCV still stops the
// processes of a delegated run through their group and their environment
// tag.
func BecomeSubreaper() error {
	return fmt.Errorf("become child subreaper: %w on macOS (orphans are adopted by launchd)", errors.ErrUnsupported)
}
