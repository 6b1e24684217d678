//go:build unix

package model

import "syscall"

// cpuNanos is the CPU time (user + system) the process has used: on a
// shared machine it measures work where wall time measures the queue.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
