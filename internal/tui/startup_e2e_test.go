package tui_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

var (
	startedLine = regexp.MustCompile(`scv daemon (?:started|starting) \(pid (\d+)\) on (\S+); logs: (\S+)`)
	resumeLine  = regexp.MustCompile(`scv: to come back to this session: (scv .*--resume (\S+))`)
)

// startedDaemon reads the start line of the daemon a TUI started in the
// background from screen, which must show it once, and stops that daemon
// at the test's end; it gives the line's pid, socket and log.
func startedDaemon(t *testing.T, scv, home, screen string) (pid int, sock, log string) {
	t.Helper()
	m := startedLine.FindAllStringSubmatch(screen, -1)
	if len(m) != 1 {
		t.Fatalf("the daemon's start line is shown %d times, want once:\n%s", len(m), screen)
	}
	pid, _ = strconv.Atoi(m[0][1])
	t.Cleanup(func() { stopDaemonPID(t, scv, home, pid) })
	return pid, m[0][2], m[0][3]
}

// runPrinted runs in ws, in a pane, the way back a TUI printed (cmd, which
// starts with "scv"), with the built binary.
func runPrinted(t *testing.T, scv, ws, cmd string) *pane {
	t.Helper()
	return startPane(t, 220, 30, "cd "+shellQuote(ws)+" && "+shellQuote(scv)+strings.TrimPrefix(cmd, "scv"))
}

// socketExists says whether a daemon socket is in home.
func socketExists(home string) bool {
	_, err := os.Stat(filepath.Join(home, "server.sock"))
	return err == nil
}

// TestStartsDaemonUnderTmux: plain `scv` with no daemon running starts one
// in the background (saying so once, with its log), attaches and works;
// on exit it prints how to come back, and that command resumes the
// session from the daemon left running.
func TestStartsDaemonUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("Answer from an autostarted daemon."))
	fake.Script(modeltest.Text("Second answer after resuming."))
	writeConfig(t, home, fake.URL())
	if socketExists(home) {
		t.Fatal("a daemon socket exists before the test")
	}
	p := startSCV(t, 220, 30, scv, home, ws)
	p.waitFor("fake-model", "connected", "ready")
	// The pane's main screen holds the start line under the TUI; it is
	// read after the TUI leaves (alternate screen).
	p.submit("hello")
	p.waitFor("Answer from an autostarted daemon.", "ready")
	p.quit()
	s := p.screen()
	pid, sock, log := startedDaemon(t, scv, home, s)
	if sock != filepath.Join(home, "server.sock") || log != filepath.Join(home, "logs", "daemon.log") {
		t.Errorf("the start line names %s and %s", sock, log)
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("the started daemon (pid %d) does not outlive the TUI", pid)
	}
	r := resumeLine.FindStringSubmatch(s)
	if r == nil {
		t.Fatalf("no line saying how to come back:\n%s", s)
	}
	if want := "scv --scv-home " + home + " --resume " + r[2]; r[1] != want {
		t.Errorf("the way back is %q, want %q", r[1], want)
	}

	// The printed command (with the built binary) resumes the session;
	// the daemon runs, so nothing is started again.
	p = runPrinted(t, scv, ws, r[1])
	p.waitFor("› hello", "Answer from an autostarted daemon.", "ready")
	p.submit("again")
	p.waitFor("Second answer after resuming.", "ready")
	if got := lastUserTexts(fake); len(got) != 2 || got[0] != "hello" || got[1] != "again" {
		t.Errorf("the resumed session sent the user messages %q", got)
	}
	p.quit()
	if s := p.screen(); startedLine.MatchString(s) {
		t.Errorf("a second daemon was started:\n%s", s)
	}
}

// TestPromptBeforeAttachUnderTmux: `scv` starting its daemon draws the
// whole screen before the session exists and takes a prompt at once; the
// prompt typed the moment the TUI shows anything is sent exactly once,
// whether it arrived while connecting (kept, then sent) or just after.
func TestPromptBeforeAttachUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("Answer to the early prompt."))
	writeConfig(t, home, fake.URL())
	p := startSCV(t, 220, 30, scv, home, ws)
	early := false
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		s := p.screen()
		if strings.Contains(s, "connecting to the daemon…") {
			early = true
			if !strings.Contains(s, "fake-model") || !strings.Contains(s, "Ask SCV") {
				t.Errorf("the frame before the session lacks the configured model or the composer:\n%s", s)
			}
			break
		}
		if strings.Contains(s, "ready") {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.submit("early prompt")
	p.waitFor("Answer to the early prompt.", "ready")
	t.Logf("typed while connecting: %v", early)
	if got := lastUserTexts(fake); len(got) != 1 || got[0] != "early prompt" {
		t.Errorf("user messages sent: %q, want the early prompt once", got)
	}
	p.quit()
	startedDaemon(t, scv, home, p.screen())
}

// TestDaemonFailsAtStartUnderTmux: a daemon that cannot start (its
// configuration is invalid) ends the TUI, which drew its screen meanwhile:
// the terminal is restored, and the error says why (the last line the
// daemon logged) and names its log.
func TestDaemonFailsAtStartUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	writeConfig(t, home, "http://127.0.0.1:9")
	appendConfig(t, home, "[tui]\nnot_a_key = 1\n")
	p := startSCV(t, 220, 30, scv, home, ws)
	p.assertRestored(1)
	log := filepath.Join(home, "logs", "daemon.log")
	if s := p.screen(); !strings.Contains(s, "the daemon exited at start") || !strings.Contains(s, `unknown key "tui.not_a_key"`) ||
		!strings.Contains(s, log) {
		t.Errorf("the error does not say the daemon exited at start, why, and name %s:\n%s", log, s)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "not_a_key") {
		t.Errorf("the daemon's log does not name the bad key:\n%s", b)
	}
	if socketExists(home) {
		t.Error("a socket is left")
	}
}

// TestNoDaemonUnderTmux: `scv --no-daemon` serves its session inside the
// TUI's process: no daemon socket appears, the turn runs and is stored,
// and the way back it prints (with --no-daemon) resumes it.
func TestNoDaemonUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo in-process-bash"}`))
	fake.Script(modeltest.Text("Served in process."))
	fake.Script(modeltest.Text("Resumed in process."))
	writeConfig(t, home, fake.URL())
	p := startSCV(t, 220, 30, scv, home, ws, "--no-daemon")
	p.waitFor("fake-model", "connected", "ready")
	p.submit("run it")
	p.answerApproval("y", "echo in-process-bash")
	p.waitFor("⎿ in-process-bash", "Served in process.", "ready")
	if socketExists(home) {
		t.Error("--no-daemon left a daemon socket")
	}
	p.quit()
	s := p.screen()
	if startedLine.MatchString(s) {
		t.Errorf("--no-daemon started a daemon:\n%s", s)
	}
	r := resumeLine.FindStringSubmatch(s)
	if r == nil || !strings.Contains(r[1], " --no-daemon --resume ") {
		t.Fatalf("no way back with --no-daemon:\n%s", s)
	}
	p = runPrinted(t, scv, ws, r[1])
	p.waitFor("› run it", "Served in process.", "ready")
	p.submit("more")
	p.waitFor("Resumed in process.", "ready")
	p.quit()
	if socketExists(home) {
		t.Error("--no-daemon --resume left a daemon socket")
	}
}
