package acp_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// Benchmarks of the real scv acp binary (docs/benchmarks/acp.md):
//
//	go test ./internal/acp -run '^$' -bench . -benchtime 20x

// benchEnv is a home whose config points at fake, the environment, and a
// workspace with notes.txt.
func benchEnv(b *testing.B, fake *modeltest.Server) (ws string, env []string) {
	fake.Models = []string{"gpt-4.1-mini"} // GET /models must not take a scripted step
	_, env = homeEnv(b, fake)
	ws = testutil.TempDir(b)
	testutil.WriteFile(b, filepath.Join(ws, "notes.txt"), "some notes\n")
	return ws, env
}

// BenchmarkStartInitialize: scv acp started until initialize is answered
// (then closed; the exit is outside the timing only in the metric
// "exit-ms").
func BenchmarkStartInitialize(b *testing.B) {
	bin := scvBinary(b)
	fake := modeltest.New(b)
	_, env := benchEnv(b, fake)
	var exitNs int64
	for b.Loop() {
		p := startACP(b, bin, env)
		p.call(b, 1, "initialize", map[string]any{"protocolVersion": 1})
		b.StopTimer()
		s := nowNs()
		p.close(b)
		exitNs += nowNs() - s
		b.StartTimer()
	}
	b.ReportMetric(float64(exitNs)/float64(b.N)/1e6, "exit-ms")
}

// scriptSteps scripts a turn of n model requests: n-1 read calls, then the
// answer.
func scriptSteps(fake *modeltest.Server, n int) {
	for i := 1; i < n; i++ {
		fake.Script(modeltest.ToolCall("r"+strconv.Itoa(i), "read", `{"path":"notes.txt"}`))
	}
	fake.Script(modeltest.Text("done"))
}

// BenchmarkTurn10Ratio runs the ACP and the exec turn alternately, so both
// see the same machine load, and reports their mean times and ratio.
func BenchmarkTurn10Ratio(b *testing.B) {
	bin := scvBinary(b)
	fake := modeltest.New(b)
	ws, env := benchEnv(b, fake)
	var acpNs, execNs int64
	for b.Loop() {
		s := nowNs()
		acpTurn(b, bin, env, ws, fake)
		acpNs += nowNs() - s
		s = nowNs()
		execTurn(b, bin, env, ws, fake)
		execNs += nowNs() - s
	}
	b.ReportMetric(float64(acpNs)/float64(b.N)/1e6, "acp-ms")
	b.ReportMetric(float64(execNs)/float64(b.N)/1e6, "exec-ms")
	b.ReportMetric(float64(acpNs)/float64(execNs), "acp/exec")
}

// acpTurn is one scv acp process running the 10-step turn; it returns the
// process's peak RSS.
func acpTurn(b *testing.B, bin string, env []string, ws string, fake *modeltest.Server) float64 {
	scriptSteps(fake, 10)
	p := startACP(b, bin, env)
	p.call(b, 1, "initialize", map[string]any{"protocolVersion": 1})
	sid := p.call(b, 2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})["sessionId"]
	res := p.call(b, 3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "read it ten times"}}})
	if res["stopReason"] != "end_turn" {
		b.Fatalf("stopReason %v", res["stopReason"])
	}
	peak := testutil.PeakRSSMiB(p.cmd.Process.Pid)
	p.close(b)
	if fake.Pending() != 0 {
		b.Fatalf("the ACP turn left %d scripted responses unused", fake.Pending())
	}
	return peak
}

func execTurn(b *testing.B, bin string, env []string, ws string, fake *modeltest.Server) {
	scriptSteps(fake, 10)
	cmd := exec.Command(bin, "exec", "--quiet", "read it ten times")
	cmd.Dir, cmd.Env = ws, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "done") {
		b.Fatalf("scv exec: %v\n%s", err, out)
	}
	if fake.Pending() != 0 {
		b.Fatalf("the exec turn left %d scripted responses unused", fake.Pending())
	}
}

// BenchmarkTurn10ACP: one process of scv acp from start to exit running a
// 10-step turn (9 read calls and the answer) through session/new and
// session/prompt; peak-rss-MiB is the process's high-water mark with its
// one session, read before it exits.
func BenchmarkTurn10ACP(b *testing.B) {
	bin := scvBinary(b)
	fake := modeltest.New(b)
	ws, env := benchEnv(b, fake)
	var peak float64
	for b.Loop() {
		peak = max(peak, acpTurn(b, bin, env, ws, fake))
	}
	b.ReportMetric(peak, "peak-rss-MiB")
}

// BenchmarkTurn10Exec: the same turn through scv exec.
func BenchmarkTurn10Exec(b *testing.B) {
	bin := scvBinary(b)
	fake := modeltest.New(b)
	ws, env := benchEnv(b, fake)
	for b.Loop() {
		execTurn(b, bin, env, ws, fake)
	}
}

func nowNs() int64 { return time.Now().UnixNano() }
