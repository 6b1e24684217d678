package proc

import (
	"os/exec"
	"testing"
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
