package mcp

import (
	"os"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/tool"
)

// benchStart starts srv from nothing and stops it, b.N times, and reports
// the start-up as SCV sees it (from spawning the process to the tool list,
// through the handshake) and the stop.
func benchStart(b *testing.B, srv Server) {
	var total, stop time.Duration
	for b.Loop() {
		m := NewManager(Options{Grace: time.Second})
		l := m.Acquire(b.TempDir(), []Server{srv})
		if tools, _ := l.Tools(b.Context()); len(tools) == 0 {
			b.Fatalf("no tools: %v", l.States()[0].Err)
		}
		total += l.States()[0].StartTime
		l.Release()
		began := time.Now()
		m.Close()
		stop += time.Since(began)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "start-ms")
	b.ReportMetric(float64(stop.Microseconds())/float64(b.N)/1000, "stop-ms")
}

// BenchmarkStartFake is the start-up of the fake Go server (the test
// binary itself).
func BenchmarkStartFake(b *testing.B) {
	dir := b.TempDir()
	cmd, env := mcptest.Fake(dir)
	benchStart(b, Server{Name: "fake", Command: cmd, Env: env, Dir: dir, StartupTimeout: 30 * time.Second, Risk: tool.Process})
}

// BenchmarkStartEverything is the start-up of server-everything on Node.
func BenchmarkStartEverything(b *testing.B) {
	n := mcptest.RequireNPM(b)
	dir := b.TempDir()
	benchStart(b, Server{Name: "everything", Command: n.Node, Args: []string{n.Everything, "stdio"},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, Dir: dir, StartupTimeout: 30 * time.Second, Risk: tool.Process})
}
