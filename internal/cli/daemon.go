package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/daemon"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/version"
)

func newRunCmd(g *globals) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground on the instance socket",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.refuseDelegated("scv run"); err != nil {
				return err
			}
			if workspace != "" {
				dir, err := workspaceDir(workspace)
				if err != nil {
					return err
				}
				if err := os.Chdir(dir); err != nil {
					return usageErr("--workspace: %v", err)
				}
			}
			return g.runDaemon(g.stderrLoggerAt(slog.LevelInfo))
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "directory the daemon runs in (sessions name their own cwd)")
	return cmd
}

func (g *globals) stderrLoggerAt(level slog.Level) *slog.Logger {
	if g.env["SCV_LOG"] == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(g.stdio.Err, &slog.HandlerOptions{Level: level}))
}

// runDaemon runs the daemon of this instance in the foreground; its
// store, server, bridge and status are built by app.NewDaemon.
func (g *globals) runDaemon(logger *slog.Logger) error {
	opts, _, err := g.appOptions(logger, true)
	if err != nil {
		return err
	}
	d, err := app.NewDaemon(g.ctx, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	err = d.Run(g.ctx)
	if errors.Is(err, daemon.ErrRunning) {
		return &exitError{code: ExitFailure, msg: err.Error()}
	}
	if err == nil {
		logger.Info("daemon stopped")
	}
	return err
}

func newStartCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "start",
		Short: "Start the daemon in the background (logs to $SCV_HOME/logs/daemon.log)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.refuseDelegated("scv start"); err != nil {
				return err
			}
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			if st, err := g.queryStatus(layout); err == nil {
				fmt.Fprintf(g.stdio.Out, "scv daemon already running (pid %d) on %s\n", st.PID, layout.Socket())
				return nil
			}
			return g.startDaemon(layout)
		},
	}
}

func (g *globals) startDaemon(layout paths.Layout) error {
	return g.startDaemonReady(layout, func(layout paths.Layout) bool {
		_, err := g.queryStatus(layout)
		return err == nil
	})
}

// startDaemonReady starts the daemon in the background and waits until
// ready says it answers. A daemon that exits at once because another one
// got the instance first (two commands starting one together) is no
// failure when ready then holds.
func (g *globals) startDaemonReady(layout paths.Layout, ready func(paths.Layout) bool) error {
	wait, err := g.spawnDaemon(layout, ready, false)
	if err != nil {
		return err
	}
	return wait(g.ctx)
}

// spawnDaemon starts the daemon in the background and returns at once;
// wait then waits until ready says it answers (the caller may prepare
// meanwhile: a TUI loads its configuration). Its start line is printed
// once it answers, or at once with announceNow (a TUI that draws its
// screen while the daemon starts: nothing may be printed over it).
func (g *globals) spawnDaemon(layout paths.Layout, ready func(paths.Layout) bool, announceNow bool) (wait func(context.Context) error, err error) {
	if err := layout.Ensure(); err != nil {
		return nil, err
	}
	if err := paths.EnsureDir(layout.Logs()); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(layout.DaemonLog(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	defer logf.Close() // the child has its own copy once started
	var logStart int64 // what this start writes to the log begins here
	if st, err := logf.Stat(); err == nil {
		logStart = st.Size()
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The daemon runs in /, so every path it is given must be absolute.
	args, env, err := g.detachedArgs(layout)
	if err != nil {
		return nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(self, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	announce := func() {
		fmt.Fprintf(g.stdio.Out, "scv daemon started (pid %d) on %s; logs: %s\n", pid, layout.Socket(), layout.DaemonLog())
	}
	if announceNow {
		// Not yet "started": it may still fail, or lose the instance to
		// another daemon (the TUI says so when it does).
		fmt.Fprintf(g.stdio.Out, "scv daemon starting (pid %d) on %s; logs: %s\n", pid, layout.Socket(), layout.DaemonLog())
		announce = func() {}
	}
	return func(ctx context.Context) error {
		return g.awaitDaemon(ctx, layout, cmd, exited, ready, announce, logStart)
	}, nil
}

// awaitDaemon waits until the daemon started as cmd answers, or ctx ends
// (the daemon then starts on its own: it is detached).
func (g *globals) awaitDaemon(ctx context.Context, layout paths.Layout, cmd *exec.Cmd, exited <-chan error, ready func(paths.Layout) bool, announce func(), logStart int64) error {
	deadline := time.Now().Add(10 * time.Second)
	// Polled often: a TUI waits for this before its first frame.
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			if ready(layout) {
				return nil // another daemon of this instance answers
			}
			msg := fmt.Sprintf("the daemon exited at start (%v)", err)
			if last := lastLogLine(layout.DaemonLog(), logStart); last != "" {
				msg += ": " + last
			}
			return &exitError{code: ExitFailure, msg: msg + "; see " + layout.DaemonLog()}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if ready(layout) {
			announce()
			_ = cmd.Process.Release()
			return nil
		}
	}
	return &exitError{code: ExitFailure, msg: fmt.Sprintf("the daemon did not answer within 10 s; see %s", layout.DaemonLog())}
}

// lastLogLine is the last line the daemon wrote to its log after offset
// (at most the last 4 KiB are read), made safe for the terminal; "" when
// it wrote none.
func lastLogLine(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= offset {
		return ""
	}
	from := max(offset, st.Size()-4096)
	b := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	last := strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "scv: ")
	return termtext.Line(last)
}

// detachedArgs are the arguments and environment of a daemon started in /:
// the instance home and any config file made absolute.
func (g *globals) detachedArgs(layout paths.Layout) ([]string, []string, error) {
	config := g.configPath
	if config != "" {
		abs, err := filepath.Abs(config)
		if err != nil {
			return nil, nil, err
		}
		config = abs
	}
	args := g.globalArgs(layout.Home, config)
	env := Env{}
	for k, v := range g.env {
		env[k] = v
	}
	delete(env, "SCV_HOME") // --scv-home names it
	if c := env["SCV_CONFIG"]; c != "" {
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, nil, err
		}
		env["SCV_CONFIG"] = abs
	}
	return append(args, "run"), envList(env), nil
}

func newStopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon gracefully",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.refuseDelegated("scv stop"); err != nil {
				return err
			}
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(g.ctx, 10*time.Second)
			defer cancel()
			conn, err := g.dialDaemon(ctx, layout)
			if err != nil {
				return &exitError{code: ExitFailure, msg: err.Error()}
			}
			defer conn.Close()
			if _, err := conn.Call(ctx, &proto.DaemonShutdown{}); err != nil {
				return &exitError{code: ExitFailure, msg: fmt.Sprintf("stop daemon: %v", err)}
			}
			for ctx.Err() == nil {
				if _, err := os.Stat(layout.Socket()); errors.Is(err, os.ErrNotExist) {
					fmt.Fprintln(g.stdio.Out, "scv daemon stopped")
					return nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			return &exitError{code: ExitFailure, msg: "the daemon did not stop within 10 s"}
		},
	}
}

func (g *globals) dialDaemon(ctx context.Context, layout paths.Layout) (*client.Conn, error) {
	conn, err := client.Dial(ctx, layout.Socket())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Initialize(ctx, "scv-cli", version.Version); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (g *globals) queryStatus(layout paths.Layout) (proto.DaemonStatus, error) {
	ctx, cancel := context.WithTimeout(g.ctx, 3*time.Second)
	defer cancel()
	conn, err := g.dialDaemon(ctx, layout)
	if err != nil {
		return proto.DaemonStatus{}, err
	}
	defer conn.Close()
	return daemonStatusCall(ctx, conn, &proto.DaemonStatusRequest{})
}

// daemonStatusCall sends msg, a request the daemon answers with
// daemon.status, and returns the status of the answer.
func daemonStatusCall(ctx context.Context, conn *client.Conn, msg proto.Message) (proto.DaemonStatus, error) {
	ev, err := client.CallFor[*proto.DaemonStatusReply](ctx, conn, msg)
	if err != nil {
		return proto.DaemonStatus{}, err
	}
	if ev.Status == nil {
		return proto.DaemonStatus{}, fmt.Errorf("%s answer without status", msg.MessageType())
	}
	return *ev.Status, nil
}

// printDaemonProvider writes the provider lines of scv status.
func printDaemonProvider(w io.Writer, p *proto.DaemonProvider) {
	fmt.Fprintf(w, "  provider:    %s (%s), model %s\n  base URL:    %s\n", termtext.Line(p.Profile), termtext.Line(p.WireAPI), termtext.Line(p.Model), termtext.Line(p.BaseURL))
	switch {
	case p.KeyEnv == "":
		fmt.Fprintf(w, "  key:         inline, or none needed\n")
	case p.KeySet:
		fmt.Fprintf(w, "  key:         %s (set in the daemon's environment)\n", termtext.Line(p.KeyEnv))
	default:
		fmt.Fprintf(w, "  key:         %s is not set in the daemon's environment; sessions use the client's (scv sends it)\n", termtext.Line(p.KeyEnv))
	}
	if len(p.ConfigFiles) == 0 {
		fmt.Fprintf(w, "  config:      none (defaults)\n")
	}
	for i, f := range p.ConfigFiles {
		label := "config:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "  %-12s %s\n", label, termtext.Line(f))
	}
}

func newStatusCmd(g *globals) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show the daemon's PID, version, uptime, sessions, delegations, provider and config files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			st, err := g.queryStatus(layout)
			sb := g.sandboxStatus()
			if err != nil {
				db := g.offlineDatabase(layout)
				if jsonOut {
					out := map[string]any{"running": false, "socket": layout.Socket()}
					if db != nil {
						out["database"] = db
					}
					if sb != nil {
						out["sandbox"] = sb
					}
					printJSON(g.stdio.Out, out)
				} else {
					fmt.Fprintf(g.stdio.Out, "scv daemon: not running (no answer on %s)\nstart it with `scv run` (foreground) or `scv start`\n", layout.Socket())
					if db != nil {
						fmt.Fprintf(g.stdio.Out, "  database:    %s\n", describeDatabase(db))
					}
					if sb != nil {
						printSandboxLine(g.stdio.Out, *sb)
					}
				}
				return exitCode(ExitFailure)
			}
			if jsonOut {
				printJSON(g.stdio.Out, struct {
					Running bool `json:"running"`
					proto.DaemonStatus
					Sandbox *sandboxStatus `json:"sandbox,omitempty"`
				}{true, st, sb})
				return nil
			}
			fmt.Fprintf(g.stdio.Out, "scv daemon: running\n  pid:         %d\n  version:     %s\n  uptime:      %s\n  sessions:    %d\n  delegations: %d running, %d orphans reaped\n  socket:      %s\n",
				st.PID, st.Version, time.Duration(st.UptimeSeconds)*time.Second, st.Sessions, st.Delegations.Running, st.Delegations.OrphansReaped, layout.Socket())
			if st.ProcessTracking != "" {
				fmt.Fprintf(g.stdio.Out, "  processes:   %s\n", termtext.Line(st.ProcessTracking))
			}
			if st.Database != nil {
				fmt.Fprintf(g.stdio.Out, "  database:    %s\n", describeDatabase(st.Database))
			}
			if p := st.Provider; p != nil {
				printDaemonProvider(g.stdio.Out, p)
			}
			for _, a := range st.Clawbot {
				fmt.Fprintf(g.stdio.Out, "  clawbot %s: %s, remote tools %s, %d restarts (scv clawbot status)\n",
					termtext.Line(a.Account), termtext.Line(a.State), termtext.Line(a.RemoteTools), a.Restarts)
			}
			if sb != nil {
				printSandboxLine(g.stdio.Out, *sb)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the status as JSON")
	return cmd
}

// globalArgs are the global flags a child scv process needs, with home and
// config as given (the caller decides whether they must be absolute).
func (g *globals) globalArgs(home, config string) []string {
	var a []string
	for _, f := range [][2]string{{"--scv-home", home}, {"--config", config}, {"--model", g.model},
		{"--provider", g.provider}, {"--base-url", g.baseURL}, {"--approval-policy", g.approvalPolicy}} {
		if f[1] != "" {
			a = append(a, f[0], f[1])
		}
	}
	return a
}

func envList(env Env) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
