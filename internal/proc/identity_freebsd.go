package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// psEnvFlag makes ps(1) print each process's environment with its command.
const psEnvFlag = "-e"

// The parts of FreeBSD's struct kinfo_proc (sys/user.h) read here, on the
// 64-bit platforms SCV builds for: the entry's size and the offsets of
// ki_pid, ki_ppid, ki_pgid, ki_start (a struct timeval of two 64-bit
// fields) and ki_stat. An entry whose ki_structsize differs is refused
// rather than misread.
const (
	kinfoSize     = 1088
	kinfoOffPID   = 72
	kinfoOffPPID  = 76
	kinfoOffPGID  = 80
	kinfoOffStart = 336
	kinfoOffStat  = 388
	kinfoStatZomb = 5 // SZOMB in sys/proc.h
)

var errKinfoLayout = fmt.Errorf("kinfo_proc layout: %w on this platform", errors.ErrUnsupported)

func procInfo(pid int) (kinfo, error) {
	b, err := unix.SysctlRaw("kern.proc.pid", pid)
	if errors.Is(err, unix.ESRCH) {
		return kinfo{}, ErrGone
	}
	if err != nil {
		return kinfo{}, fmt.Errorf("sysctl kern.proc.pid: %w", err)
	}
	ks, err := parseKinfo(b)
	if err != nil {
		return kinfo{}, err
	}
	if len(ks) != 1 || ks[0].pid != pid {
		return kinfo{}, ErrGone
	}
	return ks[0], nil
}

func groupInfo(pgid int) ([]kinfo, error) { return kinfoSlice("kern.proc.pgrp", pgid) }

func allInfo() ([]kinfo, error) { return kinfoSlice("kern.proc.proc") }

func kinfoSlice(name string, args ...int) ([]kinfo, error) {
	b, err := unix.SysctlRaw(name, args...)
	if err != nil {
		return nil, fmt.Errorf("sysctl %s: %w", name, err)
	}
	return parseKinfo(b)
}

// parseKinfo splits a sysctl answer into its kinfo_proc entries.
func parseKinfo(b []byte) ([]kinfo, error) {
	var out []kinfo
	for len(b) > 0 {
		if len(b) < kinfoSize || binary.NativeEndian.Uint32(b) != kinfoSize {
			return nil, errKinfoLayout
		}
		e := b[:kinfoSize]
		i32 := func(off int) int { return int(int32(binary.NativeEndian.Uint32(e[off:]))) }
		sec := binary.NativeEndian.Uint64(e[kinfoOffStart:])
		usec := binary.NativeEndian.Uint64(e[kinfoOffStart+8:])
		out = append(out, kinfo{
			pid: i32(kinfoOffPID), ppid: i32(kinfoOffPPID), pgid: i32(kinfoOffPGID),
			start:  sec*1_000_000 + usec,
			zombie: e[kinfoOffStat] == kinfoStatZomb,
		})
		b = b[kinfoSize:]
	}
	return out, nil
}

// procctl(2) arguments for PROC_REAP_ACQUIRE on this process.
const (
	idtypePID       = 0 // P_PID
	procReapAcquire = 2 // PROC_REAP_ACQUIRE
)

// BecomeSubreaper makes this process a reaper (procctl PROC_REAP_ACQUIRE):
// orphaned descendants are reparented to it instead of to init, so it must
// reap them (Reaper).
func BecomeSubreaper() error {
	_, _, errno := unix.Syscall6(unix.SYS_PROCCTL, idtypePID, uintptr(os.Getpid()), procReapAcquire, 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("become reaper (procctl PROC_REAP_ACQUIRE): %w", errno)
	}
	return nil
}
