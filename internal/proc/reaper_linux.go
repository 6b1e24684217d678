package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process a child subreaper: orphaned descendants
// are reparented to it instead of to init, so it must reap them (Reaper).
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}

// zombieChildren lists the PIDs whose parent is ppid and that have exited
// but were not waited for. A zombie keeps its PID until it is reaped, so a
// PID found here cannot be reused by a new child before Wait4 sees it.
func zombieChildren(ppid int) []int {
	names, err := readProcNames()
	if err != nil {
		return nil
	}
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err == nil && s.ppid == ppid && s.state == 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func readProcNames() ([]string, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return names, nil
}
