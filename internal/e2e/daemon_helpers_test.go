package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// daemonProc is a `scv run` child.
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *testutil.LockedBuffer
	done   chan struct{} // closed when the process has been waited for
	err    error         // Wait's error, valid after done
}

func (in *instance) socket() string { return filepath.Join(in.home, "server.sock") }

// startDaemon runs `scv run` in the background and waits until it answers
// on its socket. The process is killed when the test ends.
func (in *instance) startDaemon(env []string) *daemonProc {
	in.t.Helper()
	d := in.spawnDaemon(env)
	ctx, cancel := context.WithTimeout(in.t.Context(), 20*time.Second)
	defer cancel()
	for {
		c, err := in.dial(ctx)
		if err == nil {
			c.Close()
			return d
		}
		select {
		case <-d.done:
			in.t.Fatalf("scv run exited at start (%v); stderr:\n%s", d.err, d.stderr)
		case <-ctx.Done():
			in.t.Fatalf("scv run did not answer within 20 s; stderr:\n%s", d.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// spawnDaemon starts `scv run` without waiting for its socket.
func (in *instance) spawnDaemon(env []string) *daemonProc {
	in.t.Helper()
	d := &daemonProc{stderr: &testutil.LockedBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command(scvBin, "--scv-home", in.home, "run")
	d.cmd.Dir = in.ws
	d.cmd.Env = env
	d.cmd.Stderr = d.stderr
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		in.t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	in.t.Cleanup(func() {
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	})
	return d
}

// wait waits up to limit for the daemon to exit and reports whether it did.
func (d *daemonProc) wait(limit time.Duration) bool {
	select {
	case <-d.done:
		return true
	case <-time.After(limit):
		return false
	}
}

// killLeavingChildren SIGKILLs the daemon alone (not its process group,
// unlike kill) and waits until it died and a little longer, for its
// children to be reparented.
func (d *daemonProc) killLeavingChildren(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !d.wait(5 * time.Second) {
		t.Fatal("the daemon did not die of SIGKILL")
	}
	time.Sleep(300 * time.Millisecond)
}

// exitCode is the daemon's exit status (-1 when killed by a signal).
func (d *daemonProc) exitCode() int {
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		return ee.ExitCode()
	}
	if d.err != nil {
		return -1
	}
	return 0
}

// dial connects to the instance socket and initializes the connection.
func (in *instance) dial(ctx context.Context) (*client.Conn, error) {
	c, err := client.Dial(ctx, in.socket())
	if err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, "e2e", "test"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// connect is dial that fails the test and closes the connection at the end.
func (in *instance) connect() *client.Conn {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(in.t.Context(), 10*time.Second)
	defer cancel()
	c, err := in.dial(ctx)
	if err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() { c.Close() })
	return c
}

// startSession opens a session in the workspace.
func (in *instance) startSession(c *client.Conn, s proto.SessionStart) *proto.SessionStarted {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(in.t.Context(), 10*time.Second)
	defer cancel()
	if s.Cwd == "" {
		s.Cwd = in.ws
	}
	ev, err := c.StartSession(ctx, s)
	if err != nil {
		in.t.Fatal(err)
	}
	return ev
}

// resume resumes the stored session sid on c; an error fails the test.
func resume(t *testing.T, c *client.Conn, sid string) *proto.SessionResumed {
	t.Helper()
	res, err := client.CallFor[*proto.SessionResumed](t.Context(), c, &proto.SessionResume{SessionID: sid})
	if err != nil {
		t.Fatalf("session.resume: %v", err)
	}
	return res
}

// sendTurn starts a turn.
func sendTurn(t *testing.T, c *client.Conn, sid, prompt string) {
	t.Helper()
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
}

// until collects events from c up to and including the first of type typ,
// failing the test after 30 s or if the connection ends.
func until(t *testing.T, c *client.Conn, typ string) []proto.Event {
	t.Helper()
	var evs []proto.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("connection ended (%v) while waiting for %s; got %v", c.Err(), typ, eventTypes(evs))
			}
			evs = append(evs, ev)
			if ev.EventType() == typ {
				return evs
			}
		case <-timeout:
			t.Fatalf("no %s within 30 s; got %v", typ, eventTypes(evs))
		}
	}
}

// next is the next event of c, failing the test after 30 s or if the
// connection ends.
func next(t *testing.T, c *client.Conn) proto.Event {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatalf("connection ended: %v", c.Err())
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return nil
}

// last is the last of evs as the type T that the caller waited for with
// until, failing the test when it is not one.
func last[T proto.Event](t *testing.T, evs []proto.Event) T {
	t.Helper()
	ev, ok := evs[len(evs)-1].(T)
	if !ok {
		t.Fatalf("last event is %s, not the type waited for", evs[len(evs)-1].EventType())
	}
	return ev
}

// ofType returns the events of type T among evs.
func ofType[T proto.Event](evs []proto.Event) []T {
	var out []T
	for _, ev := range evs {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

func eventTypes(evs []proto.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.EventType()
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
