package tui_test

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/scv-agent/scv/internal/testutil"
)

// ptyRun starts scv in a 100×30 pty and collects its output.
type ptyRun struct {
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startPTY(tb testing.TB, scv, home string, args ...string) *ptyRun {
	tb.Helper()
	cmd := exec.Command(scv, append([]string{"--scv-home", home}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		tb.Fatal(err)
	}
	r := &ptyRun{cmd: cmd, tty: f, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return r
}

// waitOutput waits until the output holds s.
func (r *ptyRun) waitOutput(tb testing.TB, s string) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		ok := bytes.Contains(r.out.Bytes(), []byte(s))
		r.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
	r.mu.Lock()
	tail := r.out.String()
	r.mu.Unlock()
	tb.Fatalf("output never showed %q; output:\n%q", s, tail[max(0, len(tail)-3000):])
}

func (r *ptyRun) stop() {
	r.cmd.Process.Signal(os.Interrupt)
	r.tty.Write([]byte{3}) // Ctrl+C
	waited := make(chan struct{})
	go func() { r.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		<-waited
	}
	r.tty.Close()
	<-r.done
}

// BenchmarkBinaryFirstPaint is the time from starting `scv` until its
// first frame (status line) reaches the terminal: against a fake daemon in
// this process, and against the real `scv run` (config loading, session
// set-up and all).
func BenchmarkBinaryFirstPaint(b *testing.B) {
	scv := scvBinaryB(b)
	b.Run("fake-daemon", func(b *testing.B) {
		home := b.TempDir()
		startFakeDaemon(b, home, 0)
		firstPaint(b, scv, home)
	})
	b.Run("scv-run", func(b *testing.B) {
		requireRun(b, scv)
		home := b.TempDir()
		writeConfig(b, home, "http://127.0.0.1:9") // never called: no prompt is sent
		startDaemon(b, scv, home)
		firstPaint(b, scv, home)
	})
}

// BenchmarkBinaryFirstPaintNoDaemon is the time from starting `scv` with
// no daemon running until its first frame: the daemon started in the
// background (and waited for) first; or, with --no-daemon, the server
// set up inside the TUI's process. Compare with BinaryFirstPaint/scv-run,
// a daemon already running.
func BenchmarkBinaryFirstPaintNoDaemon(b *testing.B) {
	scv := scvBinaryB(b)
	requireRun(b, scv)
	// autostart: an instance used before (its database made), its daemon
	// stopped; autostart-new-home: a home never used (the database is
	// created and migrated by the daemon first).
	//
	// The first full frame of an autostart comes before the session
	// exists (the TUI attaches while the daemon starts); attached-ms is,
	// in the same runs, the time until the status line says ready: the
	// session started, and a prompt typed meanwhile is sent.
	autostart := func(b *testing.B, fresh bool) {
		home := b.TempDir()
		writeConfig(b, home, "http://127.0.0.1:9")
		var attached time.Duration
		n := 0
		for b.Loop() {
			if fresh {
				b.StopTimer()
				home = b.TempDir()
				writeConfig(b, home, "http://127.0.0.1:9")
				b.StartTimer()
			}
			start := time.Now()
			r := startPTY(b, scv, home)
			r.waitOutput(b, "ctrl+c qui")
			b.StopTimer()
			r.waitOutput(b, "ready")
			attached += time.Since(start)
			n++
			r.stop()
			r.mu.Lock()
			m := startedLine.FindStringSubmatch(r.out.String())
			r.mu.Unlock()
			if m == nil {
				b.Fatal("no daemon start line in the output")
			}
			pid, _ := strconv.Atoi(m[1])
			stopDaemonPID(b, scv, home, pid)
			b.StartTimer()
		}
		b.ReportMetric(float64(attached.Microseconds())/float64(n)/1e3, "attached-ms")
	}
	b.Run("autostart", func(b *testing.B) { autostart(b, false) })
	b.Run("autostart-new-home", func(b *testing.B) { autostart(b, true) })
	b.Run("no-daemon", func(b *testing.B) {
		home := b.TempDir()
		writeConfig(b, home, "http://127.0.0.1:9")
		for b.Loop() {
			r := startPTY(b, scv, home, "--no-daemon")
			r.waitOutput(b, "ctrl+c qui")
			b.StopTimer()
			r.stop()
			b.StartTimer()
		}
	})
}

// stopDaemonPID stops a daemon started in the background and waits for
// its pid to go (SIGKILL to that pid after 10 s).
func stopDaemonPID(tb testing.TB, scv, home string, pid int) {
	stop := exec.Command(scv, "stop", "--scv-home", home)
	stop.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stop.Run()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			tb.Errorf("the daemon (pid %d) did not stop", pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstPaint(b *testing.B, scv, home string) {
	for b.Loop() {
		r := startPTY(b, scv, home)
		r.waitOutput(b, "ctrl+c qui") // the last cell is written apart
		b.StopTimer()
		r.stop()
		b.StartTimer()
	}
}

// BenchmarkBinaryRSS1000Turns reports the RSS of the TUI process after
// it rendered 1,000 whole turns of scripted traffic.
func BenchmarkBinaryRSS1000Turns(b *testing.B) {
	scv := scvBinaryB(b)
	for b.Loop() {
		home := b.TempDir()
		startFakeDaemon(b, home, 1000)
		r := startPTY(b, scv, home)
		r.waitOutput(b, "blast-finished")
		time.Sleep(200 * time.Millisecond) // let the last frames settle
		b.ReportMetric(testutil.RSSMiB(r.cmd.Process.Pid), "rss-MiB")
		r.stop()
	}
}

func scvBinaryB(b *testing.B) string {
	if testing.Short() {
		b.Skip("builds the scv binary")
	}
	buildOnce.Do(buildSCV)
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return builtSCV
}

// BenchmarkBinaryResume1000 is the time from starting `scv --resume ID`
// until its first full frame reaches the terminal, for a session of 1,000
// realistic turns in the real daemon: the process start, the handshake,
// session.resume (lease, tools, model client, the whole history, the last
// 50 turns with their events), the replay of those turns through the live
// event code and the first render. The database comes from
// internal/store's TestWriteBenchDB.
func BenchmarkBinaryResume1000(b *testing.B) {
	scv := scvBinaryB(b)
	requireRun(b, scv)
	home, ws := b.TempDir(), b.TempDir()
	cmd := exec.Command("go", "test", "github.com/scv-agent/scv/internal/store", "-count=1", "-run", "^TestWriteBenchDB$", "-args",
		"-bench-db="+home, "-bench-db-kind=resume1000", "-bench-db-workspace="+ws)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("write the benchmark database: %v\n%s", err, out)
	}
	// The stored session names the openai profile: keyless, never called.
	config := "[providers.openai]\nbase_url = \"http://127.0.0.1:9\"\napi_key_env = \"\"\n"
	if err := os.WriteFile(home+"/config.toml", []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	startDaemon(b, scv, home)
	for b.Loop() {
		r := startPTY(b, scv, home, "--resume", "bench-1000")
		r.waitOutput(b, "ctrl+c qui")
		b.StopTimer()
		r.mu.Lock()
		painted := r.out.Len()
		r.mu.Unlock()
		r.stop()
		b.ReportMetric(float64(painted)/1024, "first-frame-KiB")
		b.StartTimer()
	}
}
