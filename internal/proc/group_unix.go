//go:build linux || darwin || freebsd

package proc

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// StopGroup stops every process of group pgid: TERM (and CONT, so stopped
// members can act on it), then up to grace for the group to go, then KILL
// and a short bounded wait for the kernel to finish them. It returns at once
// when nothing of the group runs. Zombies are ignored.
func StopGroup(pgid int, grace time.Duration) {
	if pgid <= 1 || !groupLive(pgid) {
		return
	}
	_ = unix.Kill(-pgid, unix.SIGTERM)
	_ = unix.Kill(-pgid, unix.SIGCONT)
	if waitGroupGone(pgid, grace) {
		return
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	// KILL cannot be ignored, but on a loaded machine the victims may take a
	// moment to be scheduled and die; return only once they have (bounded).
	waitGroupGone(pgid, 2*time.Second)
}

// waitGroupGone polls until nothing of group pgid runs or d elapses.
func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if !groupLive(pgid) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(step, left))
		step = min(step*2, 25*time.Millisecond)
	}
}

// killGroup KILLs group pgid at once.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}

// signalErr names pid in a failed kill; a vanished process is ErrGone.
func signalErr(pid int, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ESRCH) {
		return ErrGone
	}
	return fmt.Errorf("signal pid %d: %w", pid, err)
}
