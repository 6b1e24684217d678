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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/scv-agent/scv/bench/internal/benchd"
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
	h := modeltest.NewHandler()
	for range turns + 1 {
		for i := range steps {
			h.Script(modeltest.ToolCall(fmt.Sprintf("b%d", i), "bash", `{"command":"true"}`))
		}
		h.Script(modeltest.Text("done"))
	}
	url, stop, err := benchd.Serve(h)
	if err != nil {
		return err
	}
	defer stop()

	sleepers, err := startIdle(idle)
	defer stopAll(sleepers)
	if err != nil {
		return err
	}
	var env []string
	if tracking != "" {
		env = append(env, "SCV_PROCESS_TRACKING="+tracking)
	}
	d, err := benchd.Start(scv, url, "", env...)
	if err != nil {
		return err
	}
	defer d.Stop()
	c, err := d.Dial(ctx, "bash_steps")
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.StartSession(ctx, proto.SessionStart{Cwd: d.WS})
	if err != nil {
		return err
	}
	if _, err := benchd.Turn(ctx, c, st.SessionID); err != nil { // warm-up
		return err
	}
	cpu0, err := benchd.CPUTime(d.Pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for range turns {
		if _, err := benchd.Turn(ctx, c, st.SessionID); err != nil {
			return err
		}
	}
	wall := time.Since(t0)
	cpu1, err := benchd.CPUTime(d.Pid)
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
