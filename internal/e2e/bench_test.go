package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// timedHandler sums the time the fake model spends serving requests (from
// the request's arrival to the end of its streamed answer).
type timedHandler struct {
	h     *modeltest.Handler
	mu    sync.Mutex
	spent time.Duration
	n     int
}

func (th *timedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	th.h.ServeHTTP(w, r)
	th.mu.Lock()
	th.spent += time.Since(start)
	th.n++
	th.mu.Unlock()
}

func (th *timedHandler) take() (time.Duration, int) {
	th.mu.Lock()
	defer th.mu.Unlock()
	d, n := th.spent, th.n
	th.spent, th.n = 0, 0
	return d, n
}

// BenchmarkExec20Steps runs `scv exec --yes` over a 20-step scripted tool
// loop (one `read` of a small file per step, then a final answer: 21 model
// requests) against the in-process fake model. Metrics: wall time per exec,
// the fake server's own handling time, the time inside SCV per model
// request ((wall − fake) / requests, process start-up included) and the
// peak RSS of scv exec (ru_maxrss from wait4; its server runs inside it)
// and its CPU time, user plus system, with the commands it ran (wait4).
func BenchmarkExec20Steps(b *testing.B) { benchExec(b, 20) }

// BenchmarkExec0Steps is the same exec with no tool step (one request, a
// text answer): the fixed cost (process start-up, config, handshake)
// that BenchmarkExec20Steps minus this one removes from the per-step figure.
func BenchmarkExec0Steps(b *testing.B) { benchExec(b, 0) }

// BenchmarkExecShell10 and BenchmarkExecShell10Sandboxed: scv exec of a
// turn of ten bash steps (`true`), without and with the sandbox.
func BenchmarkExecShell10(b *testing.B) { benchExecTool(b, 10, "bash", `{"command":"true"}`, "") }

func BenchmarkExecShell10Sandboxed(b *testing.B) {
	benchExecTool(b, 10, "bash", `{"command":"true"}`, "[sandbox]\nmode = \"workspace-write\"\n")
}

func benchExec(b *testing.B, steps int) { benchExecTool(b, steps, "read", `{"path":"a.txt"}`, "") }

func benchExecTool(b *testing.B, steps int, toolName, toolArgs, extraConfig string) {
	th := &timedHandler{h: modeltest.NewHandler()}
	srv := httptest.NewServer(th)
	defer srv.Close()
	in := benchInstance(b, b.TempDir(), providerConfig(srv.URL, extraConfig))

	var wall, fake time.Duration
	var maxRSS int64
	var requests int
	var cpu time.Duration
	for b.Loop() {
		for i := range steps {
			th.h.Script(modeltest.ToolCall("r"+strconv.Itoa(i), toolName, toolArgs))
		}
		th.h.Script(modeltest.Text("All ", "done."))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, scvBin, "--scv-home", in.home, "exec", "--yes", "read a.txt")
		cmd.Dir, cmd.Env = in.ws, in.env
		start := time.Now()
		out, err := cmd.Output()
		wall += time.Since(start)
		cancel()
		if err != nil || string(out) != "All done.\n" {
			b.Fatalf("scv exec: %v; stdout %q", err, out)
		}
		f, n := th.take()
		if n != steps+1 {
			b.Fatalf("fake model served %d requests, want %d", n, steps+1)
		}
		fake += f
		requests += n
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss)
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall.Microseconds())/n/1000, "wall-ms/exec")
	b.ReportMetric(float64(fake.Microseconds())/n/1000, "fake-ms/exec")
	b.ReportMetric(float64((wall-fake).Microseconds())/float64(requests), "scv-µs/request")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(cpu.Microseconds())/n/1000, "cpu-ms/exec")
}

// benchInstance is newInstance for a benchmark.
func benchInstance(b *testing.B, root, config string) *instance {
	b.Helper()
	in := &instance{home: root + "/home", ws: root + "/ws"}
	for _, d := range []string{in.home, in.ws, root + "/user", root + "/tmp"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(in.home+"/config.toml", []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(in.ws+"/a.txt", []byte("hello from a.txt\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	in.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root + "/user", "TMPDIR=" + root + "/tmp", "OPENAI_API_KEY=sk-test"}
	return in
}

// procStatusKB is testutil.StatusKB as a float, for the metrics.
func procStatusKB(b *testing.B, pid int, name string) float64 {
	return float64(testutil.StatusKB(b, pid, name))
}

// daemonMemory is one measurement of BenchmarkDaemonRSS, in KiB.
type daemonMemory struct {
	idle, idleHWM, open, openHWM float64
	// idleAnon and idleFile split the idle VmRSS: anonymous pages (heap,
	// stacks) and file-backed pages (the binary's code and data).
	idleAnon, idleFile float64
	perSession         time.Duration
}

// BenchmarkDaemonRSS measures a `scv run` daemon's resident memory idle
// (after one status query; the session database is open, and the status
// read it) and with 100 idle sessions open on one
// connection (tool-enabled sessions in a small workspace). Each iteration
// starts a fresh daemon; run it with -benchtime=Nx.
func BenchmarkDaemonRSS(b *testing.B) {
	var sum daemonMemory
	for b.Loop() {
		m := measureDaemon(b)
		sum.idle += m.idle
		sum.idleHWM += m.idleHWM
		sum.idleAnon += m.idleAnon
		sum.idleFile += m.idleFile
		sum.open += m.open
		sum.openHWM += m.openHWM
		sum.perSession += m.perSession
	}
	n := float64(b.N)
	b.ReportMetric(sum.idle/n/1024, "idle-RSS-MiB")
	b.ReportMetric(sum.idleHWM/n/1024, "idle-HWM-MiB")
	b.ReportMetric(sum.idleAnon/n/1024, "idle-RssAnon-MiB")
	b.ReportMetric(sum.idleFile/n/1024, "idle-RssFile-MiB")
	b.ReportMetric(sum.open/n/1024, "100sess-RSS-MiB")
	b.ReportMetric(sum.openHWM/n/1024, "100sess-HWM-MiB")
	b.ReportMetric(float64(sum.perSession.Microseconds())/n, "µs/session.start")
}

// benchDaemon starts `scv run` for in and connects to it; stop ends both.
func benchDaemon(b *testing.B, in *instance) (pid int, c *client.Conn, stop func()) {
	b.Helper()
	cmd := exec.Command(scvBin, "--scv-home", in.home, "run")
	cmd.Dir, cmd.Env = in.ws, in.env
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	kill := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := in.dial(ctx)
	for err != nil && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		c, err = in.dial(ctx)
	}
	if err != nil {
		kill()
		b.Fatal(err)
	}
	return cmd.Process.Pid, c, func() {
		c.Close()
		kill()
	}
}

func measureDaemon(b *testing.B) daemonMemory {
	// 100 sessions on one connection: above the default bound of 32.
	in := benchInstance(b, b.TempDir(), providerConfig("http://127.0.0.1:9", "[protocol]\nmax_sessions_per_connection = 128"))
	pid, c, stop := benchDaemon(b, in)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, &proto.DaemonStatusRequest{}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	var m daemonMemory
	m.idle, m.idleHWM = procStatusKB(b, pid, "VmRSS"), procStatusKB(b, pid, "VmHWM")
	m.idleAnon, m.idleFile = procStatusKB(b, pid, "RssAnon"), procStatusKB(b, pid, "RssFile")
	start := time.Now()
	for range 100 {
		if _, err := c.StartSession(ctx, proto.SessionStart{Cwd: in.ws}); err != nil {
			b.Fatal(err)
		}
	}
	m.perSession = time.Since(start) / 100
	time.Sleep(500 * time.Millisecond)
	m.open, m.openHWM = procStatusKB(b, pid, "VmRSS"), procStatusKB(b, pid, "VmHWM")
	return m
}
