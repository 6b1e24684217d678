package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/acp"
	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/version"
)

// newACPCmd is `scv acp`: an Agent Client Protocol agent for editors.
func newACPCmd(g *globals) *cobra.Command {
	var daemon bool
	cmd := &cobra.Command{
		Use:   "acp [--daemon]",
		Short: "Speak the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim)",
		Long: "Serve one editor connection of the Agent Client Protocol (ACP v1: JSON-RPC, one JSON object per line)\n" +
			"on stdin and stdout; logs go to stderr. The editor gives each session its directory (cwd). The server runs\n" +
			"inside this process, like scv exec, sharing the session database with the daemon; --daemon attaches to the\n" +
			"running daemon's socket instead. The end of stdin cancels running turns and exits. See docs/acp.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return g.runACP(daemon) },
	}
	cmd.Flags().BoolVar(&daemon, "daemon", false, "attach to the running daemon (scv start) instead of serving in this process")
	return cmd
}

// runACP serves ACP until stdin ends.
func (g *globals) runACP(daemon bool) error {
	logger := g.stderrLogger()
	in, stopRead := interruptRead(g.ctx, g.stdio.In)
	defer stopRead()
	if daemon {
		return g.runACPDaemon(in)
	}
	a, layout, tr, err := g.newApp(logger, true)
	if err != nil {
		return err
	}
	defer a.Close()
	// The database opens while the configuration is read and checked.
	aside := openServerAside(g.ctx, layout, "scv acp", true, logger)
	defer aside.discard()
	loaded, err := a.LoadConfig("", app.NoOverrides)
	if err != nil {
		return err
	}
	a.WarmForSession(&loaded.Config)
	reconcileAtStart(g.ctx, tr, a.Contain(), logger)
	srv, stop, err := aside.serveOpen(g.ctx, a, &loaded.Config)
	if err != nil {
		return err
	}
	defer stop()
	opts := g.acpOptions(a, true)
	serveInProcess(srv, func(conn *client.Conn) { err = acp.Serve(context.Background(), conn, in, g.raw.Out, opts) })
	return err
}

// runACPDaemon serves ACP onto the daemon's socket.
func (g *globals) runACPDaemon(in io.Reader) error {
	logger := g.stderrLogger()
	a, layout, _, err := g.newApp(logger, false)
	if err != nil {
		return err
	}
	defer a.Close()
	conn, err := client.Dial(g.ctx, layout.Socket())
	if err != nil {
		return err
	}
	opts := g.acpOptions(a, false)
	// The daemon takes the key from its own environment, else from the
	// one this client sends over the socket (mode 0600).
	opts.Session = g.sessionOverrides("")
	opts.Session.Cwd = ""
	return acp.Serve(context.Background(), conn, in, g.raw.Out, opts)
}

// acpOptions are the options both transports share; checkKey fails a
// session whose provider key is missing here (in process: the server
// would need it; the daemon may have its own).
func (g *globals) acpOptions(a *app.App, checkKey bool) acp.Options {
	return acp.Options{
		Logger:  g.stderrLogger(),
		Version: version.Version,
		Workspace: func(cwd string) (string, error) {
			l, err := a.LoadConfig(cwd, app.NoOverrides)
			if err != nil {
				return "", nil // session.start reports the configuration's error
			}
			policy := ""
			if p, err := approval.Parse(l.Config.Tools.ApprovalPolicy); err == nil {
				policy = string(p)
			}
			if checkKey {
				if _, err := l.Config.APIKey(g.env); err != nil {
					return "", err
				}
			}
			return policy, nil
		},
	}
}

// interruptRead is stdin ending at Ctrl+C or SIGTERM as at its end, so
// scv acp then shuts down as at the end of input: a blocked read of a
// terminal or pipe cannot be interrupted, so stdin is copied through a pipe
// whose reader sees EOF when ctx ends. stop ends the watcher; the copier
// ends with stdin (or with the process, if stdin never ends).
func interruptRead(ctx context.Context, in io.Reader) (io.Reader, func()) {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, in)
		pw.CloseWithError(err)
	}()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			pw.CloseWithError(io.EOF)
		case <-stop:
		}
	}()
	return pr, func() { close(stop); <-done; pr.Close() }
}
