package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// Benchmarks of the real scv acp binary (docs/benchmarks/acp.md):
//
//	go test ./internal/acp -run '^$' -bench . -benchtime 20x

var (
	benchOnce sync.Once
	benchBin  string
	benchErr  error
)

func benchSCV(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "scv-acp-bench")
		if err != nil {
			benchErr = err
			return
		}
		benchBin, benchErr = testutil.BuildSCV(dir)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBin
}

// benchEnv is a home whose config points at fake, and the environment.
func benchEnv(b *testing.B, fake *modeltest.Server) (ws string, env []string) {
	fake.Models = []string{"gpt-4.1-mini"} // GET /models must not take a scripted step
	home := b.TempDir()
	ws = testutil.TempDir(b)
	testutil.WriteFile(b, filepath.Join(ws, "notes.txt"), "some notes\n")
	testutil.WriteFile(b, filepath.Join(home, "config.toml"), fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", fake.URL()))
	return ws, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SCV_HOME=" + home, "OPENAI_API_KEY=sk-test-key"}
}

// acpProc is a running scv acp with line access to its stdio.
type acpProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startACP(b *testing.B, bin string, env []string) *acpProc {
	cmd := exec.Command(bin, "acp")
	cmd.Env = env
	in, out := testutil.StartPiped(b, cmd)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &acpProc{cmd: cmd, in: in, out: sc}
}

// call sends a request and reads lines until its answer.
func (p *acpProc) call(b *testing.B, id int, method string, params any) map[string]any {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
	for p.out.Scan() {
		var m map[string]any
		if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
			b.Fatal(err)
		}
		if m["method"] == nil && m["id"] == float64(id) {
			if m["error"] != nil {
				b.Fatalf("%s: %v", method, m["error"])
			}
			return m["result"].(map[string]any)
		}
	}
	b.Fatalf("scv acp ended before answering %s", method)
	return nil
}

func (p *acpProc) close(b *testing.B) {
	p.in.Close()
	for p.out.Scan() {
	}
	if err := p.cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStartInitialize: scv acp started until initialize is answered
// (then closed; the exit is outside the timing only in the metric
// "exit-ms").
func BenchmarkStartInitialize(b *testing.B) {
	bin := benchSCV(b)
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
	bin := benchSCV(b)
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
	peak := hwmMiB(p.cmd.Process.Pid)
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
	bin := benchSCV(b)
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
	bin := benchSCV(b)
	fake := modeltest.New(b)
	ws, env := benchEnv(b, fake)
	for b.Loop() {
		execTurn(b, bin, env, ws, fake)
	}
}

// hwmMiB is pid's peak resident set (VmHWM) in MiB.
func hwmMiB(pid int) float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

func nowNs() int64 { return time.Now().UnixNano() }
