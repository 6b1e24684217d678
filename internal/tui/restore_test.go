package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// panicky wraps the real model and panics on the first key press.
type panicky struct{ *Model }

func (p panicky) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		panic("boom")
	}
	p.Model.Update(msg)
	return p, nil
}

// TestPanicRestoresTerminal runs the program as Run configures it on a pty
// and panics inside Update: the tty must leave raw mode and the alternate
// screen. The scenario runs in a child process (this test binary again)
// whose race reports go to log files rather than its exit status: one race
// in bubbletea's panic teardown is known and not SCV's (see race_test.go).
// The child reports its findings through its exit status and output; the
// race logs must hold no other report.
func TestPanicRestoresTerminal(t *testing.T) {
	logs := t.TempDir()
	out, err := childCommand(panicChildEnv, logs).CombinedOutput()
	if err != nil {
		t.Fatalf("panic scenario failed: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte(panicChildOK)) {
		t.Fatalf("panic scenario did not report:\n%s", out)
	}
	for _, r := range unknownRaces(t, logs) {
		t.Errorf("data race in the panic scenario (not the known teardown race):\n%s", r)
	}
}

// childCommand runs this test binary again as the child that env selects,
// with race reports written to logs/race.PID instead of changing its exit
// status (the variable has no effect without -race).
func childCommand(env, logs string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"=1", "GORACE=exitcode=0 log_path="+filepath.Join(logs, "race"))
	return cmd
}

const (
	panicChildEnv = "SCV_TUI_PANIC_CHILD"
	panicChildOK  = "panic scenario: terminal restored"
)

// In the child process the scenario runs instead of the tests (init runs
// before any TestMain of this test binary).
func init() {
	if os.Getenv(panicChildEnv) == "1" {
		os.Exit(runPanicChild())
	}
	if os.Getenv(raceChildEnv) == "1" {
		runRaceChild()
		os.Exit(0)
	}
}

func runPanicChild() int {
	if err := panicScenario(); err != nil {
		fmt.Fprintln(os.Stderr, "panic scenario:", err)
		return 1
	}
	fmt.Println(panicChildOK)
	return 0
}

func panicScenario() error {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80})
	before, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	drained := make(chan struct{})
	go func() { io.Copy(&out, ptmx); close(drained) }()

	m := New(Config{Session: sessionStarted, Width: 80, Height: 24})
	p := newProgram(context.Background(), panicky{m}, tty, tty)
	rawDuring := make(chan bool, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		during, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
		rawDuring <- err == nil && during.Lflag&unix.ICANON == 0
		ptmx.Write([]byte("x"))
	}()
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		p.Kill()
		return errors.New("the program did not end after the panic")
	}
	var problems []string
	if !errors.Is(err, tea.ErrProgramPanic) {
		problems = append(problems, fmt.Sprintf("Run error = %v, want ErrProgramPanic", err))
	}
	if !<-rawDuring {
		problems = append(problems, "the tty was not in raw mode while the program ran; the test proves nothing")
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		bit  uint64 // tcflag_t is 32 bits on Linux and FreeBSD, 64 on macOS
	}{{"ICANON", unix.ICANON}, {"ECHO", unix.ECHO}, {"ISIG", unix.ISIG}} {
		if uint64(before.Lflag)&f.bit != 0 && uint64(after.Lflag)&f.bit == 0 {
			problems = append(problems, f.name+" left off after the panic")
		}
	}
	tty.Close()
	ptmx.Close()
	<-drained
	if s := out.String(); !bytes.Contains([]byte(s), []byte("\x1b[?1049h")) || !bytes.Contains([]byte(s), []byte("\x1b[?1049l")) {
		problems = append(problems, fmt.Sprintf("output did not enter and leave the alternate screen: %q", s[max(0, len(s)-200):]))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
