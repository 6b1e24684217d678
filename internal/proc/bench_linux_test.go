package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkExecBaseline is plain os/exec with a pipe, for comparison.
func BenchmarkExecBaseline(b *testing.B) {
	for b.Loop() {
		if out, err := exec.Command("/bin/true").CombinedOutput(); err != nil {
			b.Fatal(err, out)
		}
	}
}

// Where the time of a bash call goes: the runner alone (/bin/true), a plain
// shell, and the login shell the bash tool uses.
func BenchmarkRun(b *testing.B) {
	for _, bb := range []struct {
		name string
		spec Spec
	}{
		{"true", Spec{Path: "/bin/true"}},
		{"bash-c-true", Spec{Path: bash, Args: []string{"-c", "true"}}},
		{"bash-lc-true", Spec{Path: bash, Args: []string{"-lc", "true"}, Env: []string{"PATH=/usr/bin:/bin"}}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				c := NewCapture(65536)
				s := bb.spec
				s.Stdout, s.Stderr = c, c
				if res, err := Run(b.Context(), s); err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatalf("%+v %v %s", res, err, c)
				}
			}
		})
	}
}

// BenchmarkStopTaggedNone is the cost the tag sweep adds to every call when
// nothing escaped: one scan of /proc/*/environ.
func BenchmarkStopTaggedNone(b *testing.B) {
	for b.Loop() {
		StopTagged("SCV_PROC_BENCH_TAG=none", DefaultGrace)
	}
}

// BenchmarkStopGroupEmpty is the cost of the group stop after a leader
// that left nothing behind.
func BenchmarkStopGroupEmpty(b *testing.B) {
	for b.Loop() {
		StopGroup(1<<22-1, DefaultGrace)
	}
}

// BenchmarkRunBookkeeping is the CPU this process spends per Run of
// /bin/true (its own user + system time, not the child's), without
// containment (group + tag sweep) and with a cgroup leaf, with 0 and
// 1,000 idle processes of its own elsewhere: what process bookkeeping
// costs per call and whether it grows with the machine's processes.
func BenchmarkRunBookkeeping(b *testing.B) {
	cg, err := NewContainment(ContainOptions{Want: MechCgroup})
	if err != nil {
		b.Logf("no cgroup: %v", err)
		cg = nil
	}
	b.Cleanup(cg.Close)
	for _, idle := range []int{0, 1000} {
		stop := idleProcesses(b, idle)
		for _, mode := range []struct {
			name    string
			contain *Containment
			tag     string
		}{
			{"group+tag", nil, "SCV_PROC_BENCH=" + strconv.Itoa(idle)},
			{"cgroup", cg, "SCV_PROC_BENCH=" + strconv.Itoa(idle)},
		} {
			if mode.name == "cgroup" && cg == nil {
				continue
			}
			b.Run(fmt.Sprintf("%s/idle=%d", mode.name, idle), func(b *testing.B) {
				cpu0 := selfCPU()
				for b.Loop() {
					if res, err := Run(b.Context(), Spec{Path: "/bin/true", Tag: mode.tag, Contain: mode.contain}); err != nil || res.ExitCode == nil {
						b.Fatalf("%+v %v", res, err)
					}
				}
				b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			})
		}
		stop()
	}
}

// idleProcesses starts n sleeping processes that are not children of this
// one (a shell's, in a process group of their own), waits until they all
// run and returns the function that kills that group.
func idleProcesses(b *testing.B, n int) func() {
	if n == 0 {
		return func() {}
	}
	sh := exec.Command("/bin/sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep 600 & i=$((i+1)); done; wait", n))
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		_ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
		_ = sh.Wait()
	}
	path := fmt.Sprintf("/proc/%d/task/%d/children", sh.Process.Pid, sh.Process.Pid)
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		out, err := os.ReadFile(path)
		if err == nil && len(strings.Fields(string(out))) >= n {
			return stop
		}
		if time.Now().After(deadline) {
			stop()
			b.Fatalf("%d idle processes did not start within 3 minutes", n)
		}
	}
}

// selfCPU is this process's user + system time (children excluded).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
