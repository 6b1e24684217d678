package testutil

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helpers for tests that start real processes. Process state is read from
// /proc (Linux), where the process tests run.

// stat is the state letter and start time (clock ticks since boot) of pid,
// from /proc/<pid>/stat; ok is false when the process does not exist.
func stat(pid int) (state string, start uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	// After the command: state is field 3, starttime field 22.
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", 0, false
	}
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return f[0], start, true
}

// Running says pid is a live process: it exists and is neither a zombie
// nor dead.
func Running(pid int) bool {
	st, _, ok := stat(pid)
	return ok && st != "Z" && st != "X" && st != "x"
}

// AnyRunning says one of pids runs.
func AnyRunning(pids ...int) bool {
	for _, p := range pids {
		if Running(p) {
			return true
		}
	}
	return false
}

// WaitGone polls until none of pids runs or d passes; it reports whether
// they all ended.
func WaitGone(d time.Duration, pids ...int) bool {
	deadline := time.Now().Add(d)
	for AnyRunning(pids...) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// KillAtCleanup SIGKILLs pids when the test ends, each only if it is still
// the process it was now (same start time), so a PID the system has reused
// for another process in the meantime is left alone.
func KillAtCleanup(t testing.TB, pids ...int) {
	type ident struct {
		pid   int
		start uint64
	}
	var ids []ident
	for _, p := range pids {
		if _, start, ok := stat(p); ok {
			ids = append(ids, ident{p, start})
		}
	}
	t.Cleanup(func() {
		for _, id := range ids {
			if _, start, ok := stat(id.pid); ok && start == id.start {
				_ = syscall.Kill(id.pid, syscall.SIGKILL)
			}
		}
	})
}

// WaitPIDs waits up to d until file holds at least n PIDs, as processes
// write them with `echo $! >> file`, and returns those it holds then (fewer
// than n when d passed: the caller says what that means). The processes are
// the test's own: they are killed when the test ends (KillAtCleanup).
func WaitPIDs(t testing.TB, file string, n int, d time.Duration) []int {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && p > 0 {
				pids = append(pids, p)
			}
		}
		if len(pids) >= n || time.Now().After(deadline) {
			break
		}
	}
	KillAtCleanup(t, pids...)
	return pids
}

// WaitPID waits up to d for file to hold a PID and returns it (killed when
// the test ends); it fails the test when d passes first.
func WaitPID(t testing.TB, file string, d time.Duration) int {
	t.Helper()
	pids := WaitPIDs(t, file, 1, d)
	if len(pids) == 0 {
		t.Fatalf("no pid in %s within %v", file, d)
	}
	return pids[0]
}

// WaitLine waits up to d for path to hold a complete line (a final newline)
// and returns its content without the surrounding space; it fails the test
// when d passes first.
func WaitLine(t testing.TB, path string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within %v", path, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitFile waits up to d for path to exist and reports whether it does.
func WaitFile(path string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OpenFDs is the number of descriptors this process has open.
func OpenFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// RSSMiB is the resident set of pid (0: this process) in MiB, or 0 when it
// cannot be read.
func RSSMiB(pid int) float64 {
	kb, _ := statusKB(pid, "VmRSS")
	return float64(kb) / 1024
}

// PeakRSSMiB is the peak resident set (VmHWM) of pid (0: this process) in
// MiB, or 0 when it cannot be read.
func PeakRSSMiB(pid int) float64 {
	kb, _ := statusKB(pid, "VmHWM")
	return float64(kb) / 1024
}

// StatusKB is the "NAME: N kB" field of /proc/<pid>/status (VmRSS, VmHWM,
// RssAnon …; pid 0: this process); it fails the test when the field
// cannot be read.
func StatusKB(t testing.TB, pid int, name string) int {
	t.Helper()
	kb, err := statusKB(pid, name)
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

func statusKB(pid int, name string) (int, error) {
	p := "/proc/self/status"
	if pid != 0 {
		p = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, name+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return 0, fmt.Errorf("%s of %s: %w", name, p, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no %s in %s", name, p)
}

// StartPiped starts cmd with a pipe to its stdin and one from its stdout;
// it fails the test when it cannot.
func StartPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}
