//go:build linux || darwin || freebsd

package hooks

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/proc"
)

// BenchmarkRunNoop is one run of a no-op hook (/bin/true) with a pre_tool
// event: the event's input file, the process, and the clean-up after it,
// by each way of finding a hook's leftover processes. group+tag is the
// fallback without a Containment (the group stop plus a sweep of every
// process's environment for the run's tag); cgroup is a leaf per run;
// subreaper makes the benchmark process a child subreaper for the rest of
// its life, so it runs last.
//
//	go test ./internal/hooks -run '^$' -bench RunNoop
func BenchmarkRunNoop(b *testing.B) {
	for _, mech := range []proc.Mechanism{proc.MechGroupTag, proc.MechCgroup, proc.MechSubreaper} {
		b.Run(string(mech), func(b *testing.B) {
			c, err := proc.NewContainment(proc.ContainOptions{Want: mech})
			if err != nil {
				b.Skipf("%s: %v", mech, err)
			}
			b.Cleanup(c.Close)
			r := New(Options{Hooks: []Hook{{Name: "noop", Event: PreTool, Command: []string{"/bin/true"}}}, Env: []string{"PATH=/usr/bin:/bin"},
				Workspace: b.TempDir(), SessionID: "s1", Contain: c})
			in := preTool("bash")
			cpu0 := selfCPU()
			for b.Loop() {
				if d := r.Run(b.Context(), in, nil); d.Deny {
					b.Fatal(d.Reason)
				}
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkInputFile is the event's input file alone: the memory file
// (Linux) against an unlinked temporary file.
func BenchmarkInputFile(b *testing.B) {
	data := []byte(`{"event":"pre_tool","hook":"noop","session_id":"s1","cwd":"/w","tool":{"name":"bash","call_id":"c1","arguments":{"command":"true"},"arguments_bytes":18}}`)
	for name, open := range map[string]func([]byte) (*os.File, error){"input": inputFile, "temp": tempInputFile} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				f, err := open(data)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}

// selfCPU is this process's user + system time (children excluded): less
// sensitive to the machine's load than wall time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
