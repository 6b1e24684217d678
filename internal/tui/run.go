package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// ErrNoTerminal is returned when stdin is a file or pipe, not a terminal.
var ErrNoTerminal = errors.New("the terminal UI needs a terminal on stdin; for a headless turn use `scv exec PROMPT`")

// Options start the TUI.
type Options struct {
	// Socket is the daemon socket of the instance.
	Socket string
	// Cwd is the session's workspace (absolute).
	Cwd string
	// Model, Provider and BaseURL are session overrides (empty: config).
	Model, Provider, BaseURL string
	// ProviderKeyEnv and ProviderKey are the client's provider key, for
	// a daemon whose environment lacks it (session.start provider_key).
	ProviderKeyEnv, ProviderKey string
	// In and Out are the terminal (os.Stdin/os.Stdout when nil).
	In  io.Reader
	Out io.Writer
	// Version is sent as the client version.
	Version string
	// Continue resumes the last session of Cwd (a new one when there is
	// none); Resume resumes the session with that id; Pick opens the
	// session picker at start.
	Continue bool
	Resume   string
	Pick     bool
}

// Run connects to the daemon, starts a session in opts.Cwd and runs the
// UI until the user quits or ctx ends. Bubble Tea restores the terminal on
// every exit path: quit, error, panic (recovered and returned as an error)
// and a cancelled ctx (SIGINT/SIGTERM in cmd/scv).
func Run(ctx context.Context, opts Options) error {
	conn, err := client.Dial(ctx, opts.Socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	in, out := opts.In, opts.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	if f, ok := in.(*os.File); ok && !term.IsTerminal(f.Fd()) {
		return ErrNoTerminal
	}
	if _, err := conn.Initialize(ctx, "scv-tui", opts.Version); err != nil {
		return fmt.Errorf("connect to the daemon on %s: %w", opts.Socket, err)
	}
	cfg, err := openSession(ctx, conn, opts)
	if err != nil {
		return err
	}
	cfg.Sender, cfg.Socket, cfg.OpenPicker = conn, opts.Socket, opts.Pick
	m := New(cfg)
	p := newProgram(ctx, m, in, out)
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		for ev := range conn.Events() {
			p.Send(EventMsg{ev})
		}
		p.Send(DisconnectedMsg{Err: conn.Err()})
	}()
	_, runErr := p.Run()
	conn.Close()
	<-pumped
	if errors.Is(runErr, tea.ErrInterrupted) || errors.Is(runErr, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // interrupted: the terminal is restored, leave quietly
	}
	return runErr
}

// openSession starts the TUI's session, or resumes the one --continue or
// --resume names.
func openSession(ctx context.Context, conn *client.Conn, opts Options) (Config, error) {
	id, notice := opts.Resume, ""
	if opts.Continue {
		list, err := client.CallFor[*proto.SessionListed](ctx, conn, &proto.SessionList{Workspace: opts.Cwd, Limit: 1})
		if err != nil {
			return Config{}, fmt.Errorf("find the last session of %s: %w", opts.Cwd, err)
		}
		if len(list.Sessions) > 0 {
			id = list.Sessions[0].SessionID
		} else {
			notice = "no earlier session in this workspace: a new one is started"
		}
	}
	if id != "" {
		ev, err := client.CallFor[*proto.SessionResumed](ctx, conn, &proto.SessionResume{SessionID: id,
			ProviderKeyEnv: opts.ProviderKeyEnv, ProviderKey: opts.ProviderKey})
		if err != nil {
			return Config{}, fmt.Errorf("resume session %s: %w", id, err)
		}
		return Config{Session: ev.Started(), Resumed: ev}, nil
	}
	started, err := conn.StartSession(ctx, proto.SessionStart{Cwd: opts.Cwd, Model: opts.Model, Provider: opts.Provider, BaseURL: opts.BaseURL, Origin: proto.OriginTUI,
		ProviderKeyEnv: opts.ProviderKeyEnv, ProviderKey: opts.ProviderKey})
	if err != nil {
		return Config{}, err
	}
	return Config{Session: *started, Notice: notice}, nil
}

// newProgram is the one place the Bubble Tea program is configured. Its
// panic recovery and signal handling stay on: they restore the terminal.
func newProgram(ctx context.Context, m tea.Model, in io.Reader, out io.Writer) *tea.Program {
	return tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
}
