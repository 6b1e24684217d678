package tui

import (
	"bytes"
	"errors"
	"io"
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
// screen.
func TestPanicRestoresTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80})
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	drained := make(chan struct{})
	go func() { io.Copy(&out, ptmx); close(drained) }()

	m := New(Config{Session: sessionStarted, GlamourStyle: "notty", Width: 80, Height: 24})
	p := newProgram(t.Context(), panicky{m}, tty, tty)
	rawDuring := make(chan bool, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		during, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		rawDuring <- err == nil && during.Lflag&unix.ICANON == 0
		ptmx.Write([]byte("x"))
	}()
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		p.Kill()
		t.Fatal("the program did not end after the panic")
	}
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Errorf("Run error = %v, want ErrProgramPanic", err)
	}
	if !<-rawDuring {
		t.Error("the tty was not in raw mode while the program ran; the test proves nothing")
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		bit  uint32
	}{{"ICANON", unix.ICANON}, {"ECHO", unix.ECHO}, {"ISIG", unix.ISIG}} {
		if before.Lflag&f.bit != 0 && after.Lflag&f.bit == 0 {
			t.Errorf("%s left off after the panic", f.name)
		}
	}
	tty.Close()
	ptmx.Close()
	<-drained
	if s := out.String(); !bytes.Contains([]byte(s), []byte("\x1b[?1049h")) || !bytes.Contains([]byte(s), []byte("\x1b[?1049l")) {
		t.Errorf("output did not enter and leave the alternate screen: %q", s[max(0, len(s)-200):])
	}
}
