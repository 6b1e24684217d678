// Package benchd holds what the daemon benchmark drivers under bench/
// share: a fake model served on 127.0.0.1, a daemon started on a fresh
// home against it, a protocol connection, a turn whose every call is
// approved, a process's own CPU time and memory from /proc; and what the
// process drivers (startup.go, exec_start.go) share: a temporary tree of
// directories and the min / median / max of their samples.
package benchd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// Serve serves h on a fresh 127.0.0.1 port and returns its base URL (with
// /v1) and the function that stops it.
func Serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// Daemon is a `scv run` started on a home of its own under a temporary
// root, with its workspace beside it.
type Daemon struct {
	Root, Home, WS string
	Pid            int
	cmd            *exec.Cmd
	log            *os.File
}

// Start writes a config pointing the openai provider at modelURL (plus
// extra TOML, e.g. a [protocol] table) and starts scv's daemon in its own
// process group; env is added to a minimal environment.
func Start(scv, modelURL, extra string, env ...string) (*Daemon, error) {
	root, err := os.MkdirTemp("", "scv-bench-")
	if err != nil {
		return nil, err
	}
	d := &Daemon{Root: root, Home: filepath.Join(root, "home"), WS: filepath.Join(root, "ws")}
	if err := d.start(scv, modelURL, extra, env); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

func (d *Daemon) start(scv, modelURL, extra string, env []string) error {
	for _, dir := range []string{d.Home, d.WS} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n\n%s", modelURL, extra)
	if err := os.WriteFile(filepath.Join(d.Home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	log, err := os.Create(d.LogPath())
	if err != nil {
		return err
	}
	d.log = log
	d.cmd = exec.Command(scv, "--scv-home", d.Home, "run")
	d.cmd.Dir, d.cmd.Stderr = d.WS, log
	d.cmd.Env = append([]string{"HOME=" + d.Root, "PATH=/usr/local/bin:/usr/bin:/bin", "OPENAI_API_KEY=sk-bench"}, env...)
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return err
	}
	d.Pid = d.cmd.Process.Pid
	return nil
}

// LogPath is where the daemon's stderr goes (kept until Stop).
func (d *Daemon) LogPath() string { return filepath.Join(d.Root, "daemon.log") }

// Stop ends the daemon (SIGTERM, then waits) and removes its root.
func (d *Daemon) Stop() {
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		_ = d.cmd.Wait()
	}
	if d.log != nil {
		_ = d.log.Close()
	}
	_ = os.RemoveAll(d.Root)
}

// Dial connects to the daemon once its socket answers, as client name.
func (d *Daemon) Dial(ctx context.Context, name string) (*client.Conn, error) {
	sock := filepath.Join(d.Home, "server.sock")
	for {
		c, err := client.Dial(ctx, sock)
		if err == nil {
			if _, err = c.Initialize(ctx, name, "1"); err == nil {
				return c, nil
			}
			c.Close()
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Turn runs one turn of session sid on c, approving every call, until it
// completes, and returns how many calls it approved (so a driver can check
// its fake model made the calls it meant to); a failed turn or a protocol
// error is returned.
func Turn(ctx context.Context, c *client.Conn, sid string) (approved int, err error) {
	return WatchTurn(ctx, c, sid, "go", nil)
}

// WatchTurn is Turn with prompt, showing observe (when set) every event of
// the connection until the turn ends.
func WatchTurn(ctx context.Context, c *client.Conn, sid, prompt string, observe func(proto.Event)) (approved int, err error) {
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: prompt}); err != nil {
		return 0, err
	}
	for {
		select {
		case <-ctx.Done():
			return approved, ctx.Err()
		case ev, ok := <-c.Events():
			if !ok {
				return approved, fmt.Errorf("connection ended: %v", c.Err())
			}
			if observe != nil {
				observe(ev)
			}
			switch e := ev.(type) {
			case *proto.ApprovalRequested:
				if err := c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: e.ApprovalID, Approved: true}); err != nil {
					return approved, err
				}
				approved++
			case *proto.TurnCompleted:
				return approved, nil
			case *proto.TurnFailed:
				return approved, fmt.Errorf("turn failed: %+v", e)
			case *proto.Error:
				return approved, fmt.Errorf("error: %s: %s", e.Code, e.Message)
			}
		}
	}
}

// CPUTime is pid's own user + system time (fields 14 and 15 of its stat).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat of %d", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, nil
}

// StatusKB is a "Name: N kB" field of /proc/<pid>/status (VmRSS, VmHWM …).
func StatusKB(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}
