package proc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// stat is the part of /proc/<pid>/stat this package reads.
type stat struct {
	state byte   // field 3: R, S, D, Z, T, X, …
	ppid  int    // field 4
	pgrp  int    // field 5
	flags uint64 // field 9: the kernel's PF_* flags
	start uint64 // field 22: start time in clock ticks since boot
}

// pfKthread is the kernel's PF_KTHREAD flag: a kernel thread, which has
// no environment and runs nothing SCV started.
const pfKthread = 0x00200000

func (s stat) kthread() bool { return s.flags&pfKthread != 0 }

func (s stat) dead() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// parseStat reads a /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errors.New("parse stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3; field 22 is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("parse stat: %d fields after the command name", len(f))
	}
	var s stat
	var err error
	s.state = f[0][0]
	if s.ppid, err = strconv.Atoi(string(f[1])); err != nil {
		return stat{}, fmt.Errorf("parse stat ppid: %w", err)
	}
	if s.pgrp, err = strconv.Atoi(string(f[2])); err != nil {
		return stat{}, fmt.Errorf("parse stat pgrp: %w", err)
	}
	if s.flags, err = strconv.ParseUint(string(f[6]), 10, 64); err != nil {
		return stat{}, fmt.Errorf("parse stat flags: %w", err)
	}
	if s.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return stat{}, fmt.Errorf("parse stat start time: %w", err)
	}
	return s, nil
}

func readStat(pid int) (stat, error) {
	var buf [1024]byte
	b, err := readInto(buf[:0], "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// StartTime is the start time of pid in clock ticks since boot (field 22 of
// /proc/<pid>/stat). Together with the PID it identifies a process even after
// the PID is reused.
func StartTime(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("start time of pid %d: invalid pid", pid)
	}
	s, err := readStat(pid)
	if err != nil {
		return 0, fmt.Errorf("start time of pid %d: %w", pid, err)
	}
	return s.start, nil
}

// Alive says the process pid with the given start time still runs. A zombie
// (exited, not yet reaped) is not alive.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	s, err := readStat(pid)
	return err == nil && s.start == start && !s.dead()
}

// SignalVerified sends sig to pid only if pid still has the given start time,
// so a reused PID is never signalled. Where the kernel has pidfds the check
// and the signal refer to the same process without any race.
func SignalVerified(pid int, start uint64, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("signal pid %d: invalid pid", pid)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrGone
		}
		if !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("signal pid %d: %w", pid, err)
		}
		// Kernels before 5.3: check, then kill; the window is tiny.
		if !Alive(pid, start) {
			return ErrGone
		}
		return signalErr(pid, unix.Kill(pid, sig))
	}
	defer unix.Close(fd)
	// The pidfd pins the process it was opened for: if its start time
	// matches now, the signal below reaches exactly that process.
	if !Alive(pid, start) {
		return ErrGone
	}
	return signalErr(pid, unix.PidfdSendSignal(fd, sig, nil, 0))
}

// groupLive says some process of group pgid is still running. Zombies do not
// count: an orphan that init has not reaped yet keeps its group ID but can
// neither run nor hold a pipe open.
func groupLive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	names, err := readProcNames()
	if err != nil {
		return true
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err == nil && s.pgrp == pgid && !s.dead() {
			return true
		}
	}
	return false
}
