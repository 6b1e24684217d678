package proc

import (
	"errors"
	"fmt"
	"os"

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
// The children come from /proc/<ppid>/task/*/children: the cost follows
// the number of this process's threads and children, not the machine's
// processes.
func zombieChildren(ppid int) []int {
	kids, err := childrenOf(ppid)
	if err != nil {
		return nil
	}
	var out []int
	for _, k := range kids {
		if k.zombie {
			out = append(out, k.pid)
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
