package bash

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/scv-agent/scv/internal/tool"
)

// Benchmarks of a whole call (plan + run + result), reporting the peak RSS
// of this process (getrusage maxrss; children are not counted). Run each
// alone for a clean peak: bench/bash_rss.sh does.

func benchCall(b *testing.B, command string) {
	r, err := tool.NewRegistry(New(Options{Env: testEnv}))
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
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

func BenchmarkBashTrue(b *testing.B) { benchCall(b, "true") }

func BenchmarkBash100MB(b *testing.B) {
	b.SetBytes(100_000_000)
	benchCall(b, "head -c 100000000 /dev/zero")
}
