package bash

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
)

// Benchmarks of a whole call (plan + run + result), reporting the peak RSS
// of this process (VmHWM; children are not counted). The peak is over the
// process's life, so run each benchmark alone for a clean figure, as
// bench/bash_rss.sh does.

func benchCall(b *testing.B, command string) { benchCallWith(b, Options{Env: testEnv}, command) }

func benchCallWith(b *testing.B, opts Options, command string) {
	r, err := tool.NewRegistry(New(opts))
	if err != nil {
		b.Fatal(err)
	}
	env := tool.Env{Workspace: b.TempDir(), OutputLimit: DefaultOutputLimit}
	raw := json.RawMessage(args(command))
	b.ResetTimer()
	for b.Loop() {
		p, res, ok := r.Prepare(env, "bash", raw)
		if !ok {
			b.Fatalf("refused: %+v", res)
		}
		if res := p.Run(b.Context()); !res.Success {
			b.Fatalf("failed: %.200s", res.Output)
		}
	}
	b.StopTimer()
	if kb := peakRSSKB(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

// peakRSSKB is VmHWM of this process: its peak resident set since its own
// exec (getrusage's maxrss would also count the parent `go test` before the
// exec, as maxrss survives execve).
func peakRSSKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}

func BenchmarkBashTrue(b *testing.B) { benchCall(b, "true") }

// BenchmarkBashTrueSandboxed is BenchmarkBashTrue confined in
// workspace-write without network: the rules are derived and the shell is
// started from a thread confined with them (proc.Spec.Confine).
func BenchmarkBashTrueSandboxed(b *testing.B) {
	if rep := sandbox.Probe(); !rep.Available {
		b.Skipf("the kernel cannot sandbox: %s", rep.Reason)
	}
	benchCallWith(b, Options{Env: testEnv, Sandbox: sandbox.Config{Mode: sandbox.ModeWorkspaceWrite,
		DenyRead: []string{"/root/.ssh", "/root/.gnupg", "/root/.aws", "/root/.config/gh", "/root/.netrc", "/root/.scv"}}}, "true")
}

func BenchmarkBash100MB(b *testing.B) {
	b.SetBytes(100_000_000)
	benchCall(b, "head -c 100000000 /dev/zero")
}
