// bash_steps measures what one `bash` step costs the daemon in CPU (its
// own user + system time from /proc/<pid>/stat, not its children's), with
// a number of idle processes elsewhere on the machine: process bookkeeping
// should follow SCV's own processes, not the machine's. It starts the
// daemon given by -scv on a fresh home, a scripted fake model in process
// (every turn is -steps `bash true` calls, then an answer), -idle `sleep`
// processes of its own, runs one warm-up turn and -turns measured turns,
// approving every call over the protocol, and prints one line:
//
//	idle=1000 tracking=cgroup turns=20 steps=5 cpu/step=0.92ms wall/turn=41.0ms
//
// It kills every process it started (by PID) before it exits.
//
//	go build -o /tmp/scv ./cmd/scv
//	go run ./bench/bash_steps -scv /tmp/scv -idle 1000
package main

import (
	"context"
	"errors"
	"flag"
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
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

func main() {
	scv := flag.String("scv", "", "scv binary to measure (required)")
	idle := flag.Int("idle", 0, "idle sleep processes to start beside the daemon")
	turns := flag.Int("turns", 20, "measured turns")
	steps := flag.Int("steps", 5, "bash steps per turn")
	tracking := flag.String("tracking", "", "SCV_PROCESS_TRACKING of the daemon (empty: its default)")
	flag.Parse()
	if *scv == "" {
		fmt.Fprintln(os.Stderr, "bash_steps: -scv is required")
		os.Exit(2)
	}
	if err := run(*scv, *idle, *turns, *steps, *tracking); err != nil {
		fmt.Fprintln(os.Stderr, "bash_steps:", err)
		os.Exit(1)
	}
}

func run(scv string, idle, turns, steps int, tracking string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := os.MkdirTemp("", "scv-bash-steps-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)

	h := modeltest.NewHandler()
	for range turns + 1 {
		for i := range steps {
			h.Script(modeltest.ToolCall(fmt.Sprintf("b%d", i), "bash", `{"command":"true"}`))
		}
		h.Script(modeltest.Text("done"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	sleepers, err := startIdle(idle)
	defer stopAll(sleepers)
	if err != nil {
		return err
	}

	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	for _, d := range []string{home, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", "http://"+ln.Addr().String()+"/v1")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	env := []string{"HOME=" + root, "PATH=/usr/local/bin:/usr/bin:/bin", "OPENAI_API_KEY=sk-bench"}
	if tracking != "" {
		env = append(env, "SCV_PROCESS_TRACKING="+tracking)
	}
	daemon := exec.Command(scv, "--scv-home", home, "run")
	daemon.Dir, daemon.Env = ws, env
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(filepath.Join(root, "daemon.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	daemon.Stderr = logf
	if err := daemon.Start(); err != nil {
		return err
	}
	defer func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		_ = daemon.Wait()
	}()

	c, err := dial(ctx, filepath.Join(home, "server.sock"))
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.StartSession(ctx, proto.SessionStart{Cwd: ws})
	if err != nil {
		return err
	}
	if err := turn(ctx, c, st.SessionID); err != nil { // warm-up
		return err
	}
	cpu0, err := cpuTime(daemon.Process.Pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for range turns {
		if err := turn(ctx, c, st.SessionID); err != nil {
			return err
		}
	}
	wall := time.Since(t0)
	cpu1, err := cpuTime(daemon.Process.Pid)
	if err != nil {
		return err
	}
	mech := tracking
	if mech == "" {
		mech = "default"
	}
	perStep := (cpu1 - cpu0) / time.Duration(turns*steps)
	fmt.Printf("idle=%d tracking=%s turns=%d steps=%d cpu/step=%.2fms wall/turn=%.1fms\n",
		idle, mech, turns, steps, float64(perStep)/1e6, float64(wall)/float64(turns)/1e6)
	return nil
}

// turn runs one turn, approving every call, until it completes.
func turn(ctx context.Context, c *client.Conn, sid string) error {
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: "go"}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-c.Events():
			if !ok {
				return fmt.Errorf("connection ended: %v", c.Err())
			}
			switch e := ev.(type) {
			case *proto.ApprovalRequested:
				if err := c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: e.ApprovalID, Approved: true}); err != nil {
					return err
				}
			case *proto.TurnCompleted:
				return nil
			case *proto.TurnFailed:
				return fmt.Errorf("turn failed: %+v", e)
			}
		}
	}
}

func dial(ctx context.Context, sock string) (*client.Conn, error) {
	for {
		c, err := client.Dial(ctx, sock)
		if err == nil {
			if _, err = c.Initialize(ctx, "bash_steps", "1"); err == nil {
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

// cpuTime is pid's own user + system time (fields 14 and 15 of its stat).
func cpuTime(pid int) (time.Duration, error) {
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

func startIdle(n int) ([]*exec.Cmd, error) {
	var out []*exec.Cmd
	for range n {
		c := exec.Command("/bin/sleep", "600")
		if err := c.Start(); err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func stopAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Process.Kill()
	}
	for _, c := range cmds {
		_ = c.Wait()
	}
}
