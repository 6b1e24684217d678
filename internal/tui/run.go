package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// ErrNoTerminal is returned when stdin is a file or pipe, not a terminal.
var ErrNoTerminal = errors.New("the terminal UI needs a terminal on stdin; for a headless turn use `scv exec PROMPT`")

// Options start the TUI.
type Options struct {
	// Socket is the daemon socket of the instance; empty with Dial.
	Socket string
	// Dial, when set, opens each connection instead of the socket (an
	// in-process server: scv --no-daemon).
	Dial func(ctx context.Context) (*client.Conn, error)
	// Cwd is the session's workspace (absolute).
	Cwd string
	// Model, Provider and BaseURL are session overrides (empty: config).
	Model, Provider, BaseURL string
	// ProviderKeyEnv and ProviderKey are the client's provider key, for
	// a daemon whose environment lacks it (session.start provider_key),
	// and ProviderKeyBaseURL the base URL it is for.
	ProviderKeyEnv, ProviderKey, ProviderKeyBaseURL string
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
	// Notify and NotifyAfter are Config's (tui.notify and
	// tui.notify_after_seconds).
	Notify      string
	NotifyAfter time.Duration
	// Starting, when set, returns once the daemon that is starting
	// answers (or why it does not, or once ctx ends). A new session's TUI then draws its
	// screen at once and attaches meanwhile (attach.go); a resume, which
	// shows stored turns, waits for it first. ShownModel is the
	// configured model, shown until the session names its own.
	Starting   func(ctx context.Context) error
	ShownModel string
}

func (o Options) client() ClientSettings {
	return ClientSettings{Model: o.Model, Provider: o.Provider, BaseURL: o.BaseURL, ProviderKeyEnv: o.ProviderKeyEnv, ProviderKey: o.ProviderKey,
		ProviderKeyBaseURL: o.ProviderKeyBaseURL}
}

// Result is what the TUI leaves behind: the session it showed last, and
// whether that session is stored (it ran a turn), so it can be resumed.
type Result struct {
	SessionID string
	Stored    bool
	// Unsent are the prompts kept while connecting that no session got
	// (the attach failed, or the user quit first): printed on exit, so
	// nothing typed is lost.
	Unsent []string
}

// CheckTerminal returns ErrNoTerminal unless in is a terminal (a pipe, a
// file, /dev/null or a reader that is no file at all are not); nil means
// the TUI can run on it.
func CheckTerminal(in io.Reader) error {
	if f, ok := in.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return ErrNoTerminal
	}
	return nil
}

func (o Options) dial(ctx context.Context) (*client.Conn, error) {
	if o.Dial != nil {
		return o.Dial(ctx)
	}
	return client.Dial(ctx, o.Socket)
}

// Run connects to the daemon, starts a session in opts.Cwd and runs the
// UI until the user quits or ctx ends. Bubble Tea restores the terminal on
// every exit path: quit, error, panic (recovered and returned as an error)
// and a cancelled ctx (SIGINT/SIGTERM in cmd/scv).
func Run(ctx context.Context, opts Options) (Result, error) {
	in, out := opts.In, opts.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	// With a daemon starting, a new session's screen comes first and the
	// program attaches (attach.go); a resume shows stored turns, so it
	// waits for the daemon.
	if opts.Starting != nil && !opts.Continue && opts.Resume == "" && !opts.Pick {
		if err := CheckTerminal(in); err != nil {
			return Result{}, err
		}
		return runProgram(ctx, opts, Config{Session: proto.SessionStarted{Cwd: opts.Cwd, Model: opts.ShownModel}}, nil, in, out)
	}
	if opts.Starting != nil {
		if err := opts.Starting(ctx); err != nil {
			return Result{}, err
		}
	}
	conn, err := opts.dial(ctx)
	if err != nil {
		return Result{}, err
	}
	defer conn.Close()
	if err := CheckTerminal(in); err != nil {
		return Result{}, err
	}
	cfg, err := initSession(ctx, conn, opts)
	if err != nil {
		return Result{}, err
	}
	return runProgram(ctx, opts, cfg, conn, in, out)
}

// initSession initializes conn and opens the TUI's session on it.
func initSession(ctx context.Context, conn *client.Conn, opts Options) (Config, error) {
	if _, err := conn.Initialize(ctx, "scv-tui", opts.Version); err != nil {
		if opts.Socket == "" {
			return Config{}, fmt.Errorf("connect to the server: %w", err)
		}
		return Config{}, fmt.Errorf("connect to the daemon on %s: %w", opts.Socket, err)
	}
	return openSession(ctx, conn, opts)
}

// runProgram runs the program on cfg's session, shown over conn; with conn
// nil, the program makes the connection and the session itself, after its
// first frame (Config.Attach).
func runProgram(ctx context.Context, opts Options, cfg Config, conn *client.Conn, in io.Reader, out io.Writer) (Result, error) {
	dialCtx, stopDials := context.WithCancel(ctx)
	defer stopDials()
	var p *tea.Program
	conns := &connSet{}
	cfg.Socket, cfg.Client = opts.Socket, opts.client()
	cfg.Notify, cfg.NotifyAfter = opts.Notify, opts.NotifyAfter
	cfg.Redial = func() (Sender, error) {
		c, err := redialDaemon(dialCtx, opts)
		if err != nil {
			return nil, err
		}
		if !conns.add(c, p) {
			c.Close()
			return nil, errors.New("the terminal UI is closing")
		}
		return c, nil
	}
	if conn == nil {
		cfg.Attach = func() AttachedMsg { return attach(dialCtx, opts, conns) }
		cfg.Adopt = func(s Sender) {
			if c, ok := s.(*client.Conn); ok {
				conns.pump(c, p)
			}
		}
	} else {
		cfg.Sender, cfg.OpenPicker = conn, opts.Pick
	}
	m := New(cfg)
	p = newProgram(ctx, m, in, out)
	if conn != nil {
		conns.add(conn, p)
	}
	_, runErr := p.Run()
	stopDials()
	conns.closeAll()
	res := m.result() // the program has ended: nothing changes m now
	if err := m.AttachErr(); err != nil && ctx.Err() == nil {
		return res, err // a signal while attaching is an interrupt below
	}
	if errors.Is(runErr, tea.ErrInterrupted) || errors.Is(runErr, tea.ErrProgramKilled) && ctx.Err() != nil {
		return res, nil // interrupted: the terminal is restored, leave quietly
	}
	return res, runErr
}

// attach waits for the starting daemon, connects and starts the session;
// the connection is held by conns (closed with the TUI) but its events
// are not pumped until the model has the session (Config.Adopt).
func attach(ctx context.Context, opts Options, conns *connSet) AttachedMsg {
	if err := opts.Starting(ctx); err != nil {
		return AttachedMsg{Err: err}
	}
	conn, err := opts.dial(ctx)
	if err != nil {
		return AttachedMsg{Err: err}
	}
	if !conns.hold(conn) {
		conn.Close()
		return AttachedMsg{Err: errors.New("the terminal UI is closing")}
	}
	cfg, err := initSession(ctx, conn, opts)
	if err != nil {
		return AttachedMsg{Err: err}
	}
	return AttachedMsg{Sender: conn, Session: cfg.Session, Notice: cfg.Notice}
}

// redialDaemon opens and initializes a new connection for a TUI whose
// connection ended; each attempt is bounded.
func redialDaemon(ctx context.Context, opts Options) (*client.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := opts.dial(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, "scv-tui", opts.Version); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// connSet holds the TUI's connections (one at a time, more after
// reconnecting) and the goroutines that pump their events into the
// program; closeAll ends both.
type connSet struct {
	mu     sync.Mutex
	conns  []*client.Conn
	closed bool
	pumps  sync.WaitGroup
}

// add starts pumping c's events into p; false once closeAll ran.
func (s *connSet) add(c *client.Conn, p *tea.Program) bool {
	if !s.hold(c) {
		return false
	}
	s.pump(c, p)
	return true
}

// hold keeps c to be closed by closeAll; false once closeAll ran.
func (s *connSet) hold(c *client.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns = append(s.conns, c)
	return true
}

// pump starts pumping the events of c, held, into p (not once closeAll
// ran: c is closed then).
func (s *connSet) pump(c *client.Conn, p *tea.Program) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.pumps.Add(1)
	go func() {
		defer s.pumps.Done()
		for ev := range c.Events() {
			p.Send(EventMsg{ev})
		}
		p.Send(DisconnectedMsg{Err: c.Err(), Conn: c})
	}()
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.pumps.Wait()
}

// openSession starts the TUI's session, or resumes the one --continue or
// --resume names.
func openSession(ctx context.Context, conn *client.Conn, opts Options) (Config, error) {
	id, notice := opts.Resume, ""
	if opts.Continue {
		list, err := client.CallFor[*proto.SessionListed](ctx, conn, &proto.SessionList{Workspace: opts.Cwd, Limit: 1, All: true})
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
		ev, err := client.CallFor[*proto.SessionResumed](ctx, conn, opts.client().resume("", id))
		if err != nil {
			return Config{}, fmt.Errorf("resume session %s: %w", id, err)
		}
		return Config{Session: ev.Started(), Resumed: ev}, nil
	}
	started, err := conn.StartSession(ctx, *opts.client().start("", opts.Cwd))
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
