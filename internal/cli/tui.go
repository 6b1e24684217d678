package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tui"
	"github.com/scv-agent/scv/internal/version"
)

// newTUICmd is `scv tui`: the terminal UI attached to the daemon socket.
func newTUICmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Terminal UI attached to the daemon, started when none runs (same as plain `scv`)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTUI(g) },
	}
	cmd.Flags().BoolVar(&g.tuiNoDaemon, "no-daemon", false, noDaemonUsage)
	return cmd
}

const noDaemonUsage = "serve this TUI's sessions inside this process instead of the daemon (none is started)"

// attachTUIRoot makes plain `scv` run the TUI, and `scv --version` print
// what `scv version` prints.
func attachTUIRoot(root *cobra.Command, g *globals) {
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and build info, as the version command does")
	root.Flags().BoolVarP(&g.tuiContinue, "continue", "c", false, "resume the last session of this workspace")
	root.Flags().BoolVarP(&g.tuiResume, "resume", "r", false, "resume session ID (scv --resume ID), or pick one from a list when no ID is given")
	root.Flags().BoolVar(&g.tuiNoDaemon, "no-daemon", false, noDaemonUsage)
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 && !(g.tuiResume && len(args) == 1) {
			return usageErr("%s", unknownCommand(cmd, args))
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if showVersion {
			g.printVersion()
			return nil
		}
		if g.tuiContinue && g.tuiResume {
			return usageErr("--continue and --resume name the session two ways; pass one")
		}
		if len(args) == 1 {
			g.tuiResumeID = args[0]
		}
		return runTUI(g)
	}
}

// unknownCommand explains an argument of plain `scv` that names no
// command: a near miss gets the command it is close to, anything else
// (most often a prompt) the exec command that runs it.
func unknownCommand(root *cobra.Command, args []string) string {
	msg := fmt.Sprintf("unknown command %q for \"scv\"", args[0])
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		return msg + "; did you mean " + orList(s) + "? (scv --help lists the commands)"
	}
	return msg + fmt.Sprintf("; to run a prompt use: scv exec %q (scv --help lists the commands)", strings.Join(args, " "))
}

// runTUI runs the terminal UI: attached to the daemon, which is started
// in the background first when none listens (as `scv start` does), or with
// --no-daemon on a server inside this process. On the way out it says how
// to come back to the session shown.
func runTUI(g *globals) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	cwd, err := workspaceDir("")
	if err != nil {
		return err
	}
	// Before anything is started: a TUI that cannot run starts no daemon.
	if err := tui.CheckTerminal(g.stdio.In); err != nil {
		return err
	}
	var res tui.Result
	if g.tuiNoDaemon {
		res, err = g.runTUIInProcess(layout, g.tuiOptions(layout, cwd))
	} else {
		wait, werr := g.ensureDaemon(layout)
		if werr != nil {
			return werr
		}
		opts := g.tuiOptions(layout, cwd) // while a daemon starts
		// With a daemon starting, a new session draws its screen at once
		// and attaches when the daemon answers; a resume waits for it
		// first (tui.Run).
		opts.Starting = wait
		res, err = tui.Run(g.ctx, opts)
	}
	if len(res.Unsent) > 0 {
		quoted := make([]string, len(res.Unsent))
		for i, p := range res.Unsent {
			quoted[i] = termtext.Line(strconv.Quote(p))
		}
		fmt.Fprintf(g.stdio.Err, "scv: not sent (kept while connecting): %s\n", strings.Join(quoted, ", "))
	}
	if res.Stored {
		fmt.Fprintf(g.stdio.Out, "scv: to come back to this session: %s\n", g.resumeCommand(res.SessionID))
	}
	return err
}

// resumeCommand is the command line that resumes session id the way this
// TUI ran.
func (g *globals) resumeCommand(id string) string {
	args := []string{"scv"}
	if g.scvHome != "" {
		args = append(args, "--scv-home", shellWord(g.scvHome))
	}
	if g.tuiNoDaemon {
		args = append(args, "--no-daemon")
	}
	return strings.Join(append(args, "--resume", shellWord(id)), " ")
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ensureDaemon starts the daemon in the background when nothing listens
// on the instance socket, as `scv start` does (its line, with the log
// path, is printed once, before the TUI takes the screen); wait returns
// once it answers, and is nil when a daemon already answers.
func (g *globals) ensureDaemon(layout paths.Layout) (wait func(context.Context) error, err error) {
	if g.daemonListening(layout) {
		return nil, nil
	}
	if err := g.refuseDelegated("scv (starting a daemon)"); err != nil {
		return nil, err
	}
	return g.spawnDaemon(layout, g.daemonListening, true)
}

// daemonListening says a daemon answers the handshake on the socket.
func (g *globals) daemonListening(layout paths.Layout) bool {
	ctx, cancel := context.WithTimeout(g.ctx, 2*time.Second)
	defer cancel()
	conn, err := g.dialDaemon(ctx, layout)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// runTUIInProcess serves the TUI's connections from a server in this
// process (scv --no-daemon), as scv exec serves its turn: the same app,
// store and server a daemon would use, with its log in
// $SCV_HOME/logs/tui.log (the terminal belongs to the TUI).
func (g *globals) runTUIInProcess(layout paths.Layout, opts tui.Options) (tui.Result, error) {
	if err := paths.EnsureDir(layout.Logs()); err != nil {
		return tui.Result{}, err
	}
	logf, err := os.OpenFile(filepath.Join(layout.Logs(), "tui.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return tui.Result{}, fmt.Errorf("open the TUI's log: %w", err)
	}
	defer logf.Close()
	level := slog.LevelInfo
	if g.env["SCV_LOG"] == "debug" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: level}))
	a, layout, tr, err := g.newApp(logger, true)
	if err != nil {
		return tui.Result{}, err
	}
	defer a.Close() // stops the MCP servers the sessions started
	// The database opens while the configuration is read and checked.
	aside := openServerAside(g.ctx, layout, "scv tui", true, logger)
	defer aside.discard()
	loaded, err := a.LoadConfig(opts.Cwd, app.NoOverrides)
	if err != nil {
		return tui.Result{}, err
	}
	a.WarmForSession(&loaded.Config)
	reconcileAtStart(g.ctx, tr, a.Contain(), logger)
	srv, stop, err := aside.serveOpen(g.ctx, a, &loaded.Config)
	if err != nil {
		return tui.Result{}, err
	}
	defer stop()
	p := newPipeServer(srv)
	defer p.close()
	opts.Socket, opts.Dial = "", p.dial
	return tui.Run(g.ctx, opts)
}

// pipeServer serves protocol connections of srv in this process, one
// client.InProcess per connection (the TUI opens another after a lost
// connection).
type pipeServer struct {
	srv   *server.Server
	mu    sync.Mutex
	conns []*client.InProcess
}

func newPipeServer(srv *server.Server) *pipeServer { return &pipeServer{srv: srv} }

func (p *pipeServer) dial(context.Context) (*client.Conn, error) {
	// Its own context: the TUI's Ctrl+C cancels turns through the
	// protocol, it does not tear the server down under them.
	c := client.ServeInProcess(context.Background(), p.srv.Serve)
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	return c.Conn, nil
}

// close ends every connection and waits for each to be served out: the
// client's EOF makes the server cancel what still runs; each is torn down
// after client.InProcessCloseWait.
func (p *pipeServer) close() {
	p.mu.Lock()
	conns := p.conns
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// tuiOptions are the TUI's options for the workspace cwd.
func (g *globals) tuiOptions(layout paths.Layout, cwd string) tui.Options {
	o := g.sessionOverrides(cwd)
	// A configuration that does not load keeps the defaults; the daemon
	// reports what is wrong when the session starts.
	notify, after := tui.NotifyBell, time.Duration(0)
	shown := o.Model
	if loaded, _, err := g.loadConfig(cwd); err == nil {
		notify, after = loaded.Config.TUI.Notify, time.Duration(loaded.Config.TUI.NotifyAfterSeconds)*time.Second
		if shown == "" {
			_, p := loaded.Config.ActiveProvider()
			shown = p.Model
		}
	}
	return tui.Options{
		Notify:      notify,
		NotifyAfter: after,
		ShownModel:  shown,
		Socket:      layout.Socket(),
		Cwd:         cwd,
		Model:       o.Model,
		Provider:    o.Provider,
		BaseURL:     o.BaseURL,
		// The key travels only over the daemon's socket (mode 0600).
		ProviderKeyEnv:     o.ProviderKeyEnv,
		ProviderKey:        o.ProviderKey,
		ProviderKeyBaseURL: o.ProviderKeyBaseURL,
		// The TUI draws the screen itself and makes every text visible as
		// it arrives (internal/tui/visible.go).
		In:       g.stdio.In,
		Out:      g.raw.Out,
		Version:  version.Version,
		Continue: g.tuiContinue,
		Resume:   g.tuiResumeID,
		Pick:     g.tuiResume && g.tuiResumeID == "",
	}
}

// sessionOverrides are the client's settings a session started through
// the daemon must use, whatever environment the daemon was started in:
// the flags, else the SCV_PROVIDER, SCV_MODEL and SCV_BASE_URL variables,
// and the provider key from the variable the client's profile names
// (the daemon uses it only for the endpoint it is for: the base URL the
// client's own configuration gives that profile).
func (g *globals) sessionOverrides(cwd string) proto.SessionStart {
	o := g.sessionPicks()
	// A configuration that does not load sends no key; the daemon then
	// reports what is wrong when the session starts.
	if loaded, _, err := g.loadConfig(cwd); err == nil {
		if _, prof := loaded.Config.ActiveProvider(); prof.APIKey == "" && prof.APIKeyEnv != "" && g.env[prof.APIKeyEnv] != "" {
			o.ProviderKeyEnv, o.ProviderKey, o.ProviderKeyBaseURL = prof.APIKeyEnv, g.env[prof.APIKeyEnv], prof.BaseURL
		}
	}
	return o
}

// sessionPicks are the provider, model and base URL the user named for
// this run (flags, else SCV_PROVIDER, SCV_MODEL, SCV_BASE_URL): what
// sessionOverrides sends, without the key, so without reading the
// configuration.
func (g *globals) sessionPicks() proto.SessionStart {
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return g.env[env]
	}
	return proto.SessionStart{Provider: pick(g.provider, "SCV_PROVIDER"), Model: pick(g.model, "SCV_MODEL"), BaseURL: pick(g.baseURL, "SCV_BASE_URL")}
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
