package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
)

// This file holds the harness of the end-to-end tests: the real scv binary
// in a tmux pane (a real terminal), read back with capture-pane.

var (
	buildOnce sync.Once
	builtSCV  string
	buildErr  error
	buildDir  string
)

// scvBinary builds cmd/scv once per test process.
func scvBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the scv binary; skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	buildOnce.Do(buildSCV)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtSCV
}

func buildSCV() {
	// SCV_TEST_BIN runs the tests and benchmarks against a binary built
	// beforehand (e.g. two builds compared in alternated runs).
	if bin := os.Getenv("SCV_TEST_BIN"); bin != "" {
		builtSCV = bin
		return
	}
	buildDir, buildErr = os.MkdirTemp("", "scv-tui-e2e-")
	if buildErr != nil {
		return
	}
	builtSCV, buildErr = testutil.BuildSCV(buildDir)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// pane is one tmux server with one pane running a command.
type pane struct {
	t    *testing.T
	sock string
}

// startPane runs script under sh in a detached tmux session of w×h cells.
// After the script the pane stays open so the final screen can be read.
func startPane(t *testing.T, w, h int, script string) *pane {
	t.Helper()
	p := &pane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	full := script + `; echo "exit=$?"; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)'; echo pane-script-finished; sleep 60`
	p.tmux("new-session", "-d", "-s", "e2e", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sh", "-c", full)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, errb.String())
	}
	return out.String()
}

func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-t", "e2e") }

// keys sends tmux key names (e.g. "Enter", "C-c") or literal text with -l.
func (p *pane) keys(k ...string) { p.tmux(append([]string{"send-keys", "-t", "e2e"}, k...)...) }

func (p *pane) text(s string) { p.tmux("send-keys", "-t", "e2e", "-l", s) }

// submit types s into the composer and sends it with Enter.
func (p *pane) submit(s string) {
	p.text(s)
	p.keys("Enter")
}

// answerApproval waits for the approval panel showing all of want and
// answers it with key.
func (p *pane) answerApproval(key string, want ...string) {
	p.t.Helper()
	p.waitFor(append([]string{"Approve this tool call?"}, want...)...)
	p.keys(key)
}

// quit quits with Ctrl+C and checks that scv exited 0 and restored the
// terminal.
func (p *pane) quit() {
	p.t.Helper()
	p.keys("C-c")
	p.assertRestored(0)
}

// waitFor polls the screen until it contains all of want (or 15 s pass).
func (p *pane) waitFor(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = p.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(s, w) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("screen never showed %q; last screen:\n%s", want, s)
	return ""
}

// waitUntil polls cond every interval until it holds (true) or d passes
// (false).
func waitUntil(d, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// format reads a tmux format variable of the pane.
func (p *pane) format(f string) string {
	return strings.TrimSpace(p.tmux("display-message", "-p", "-t", "e2e", f))
}

// childPID is the pid of the pane's first child (scv under sh).
func (p *pane) childPID() int {
	p.t.Helper()
	pid := p.format("#{pane_pid}")
	b, err := os.ReadFile(filepath.Join("/proc", pid, "task", pid, "children"))
	if err != nil {
		p.t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		p.t.Fatal("the pane's shell has no child")
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// assertRestored checks that scv exited with want and left the terminal
// as it found it: main screen, cursor visible, canonical mode and echo on.
func (p *pane) assertRestored(wantExit int) {
	p.t.Helper()
	s := p.waitFor("pane-script-finished")
	if !strings.Contains(s, fmt.Sprintf("exit=%d", wantExit)) {
		p.t.Errorf("want exit=%d; screen:\n%s", wantExit, s)
	}
	for _, mode := range []string{"icanon", "echo"} {
		if !containsLine(s, mode) {
			p.t.Errorf("terminal mode %s not restored; screen:\n%s", mode, s)
		}
	}
	if got := p.format("#{alternate_on} #{cursor_flag}"); got != "0 1" {
		p.t.Errorf("alternate screen / cursor flags = %q, want \"0 1\" (main screen, cursor shown)", got)
	}
}

func containsLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// tryTmux runs a tmux command that may fail (show-buffer with no buffer).
func (p *pane) tryTmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := cmd.Output()
	return string(out), err
}
