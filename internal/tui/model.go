// Package tui is SCV's terminal UI (docs/tui.md): a Bubble Tea client that
// renders the protocol events of one session and sends protocol messages.
// It keeps no authoritative state and talks to the daemon only through
// internal/client and internal/proto.
package tui

import (
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// Sender writes one client message (client.Conn satisfies it).
type Sender interface {
	Send(msg proto.Message) error
}

// Config sets up a Model.
type Config struct {
	// Session is the session.started event of the session shown.
	Session proto.SessionStarted
	// Sender carries client messages to the server.
	Sender Sender
	// Socket is shown in the header; empty for other transports.
	Socket string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// MaxItems bounds the transcript (DefaultMaxItems when 0).
	MaxItems int
	// Width and Height are the initial size until the terminal reports one.
	Width, Height int
	// Resumed, when set, is the session.resumed of the session shown
	// (instead of Session): its stored turns are redrawn at start.
	Resumed *proto.SessionResumed
	// OpenPicker opens the session picker at start (scv --resume without
	// an id).
	OpenPicker bool
	// Notice is shown in the transcript at start.
	Notice string
	// Redial opens a new initialized connection to the daemon whose
	// events reach the program as EventMsg (and its end as
	// DisconnectedMsg); nil: a lost connection is not dialled again.
	Redial func() (Sender, error)
	// RedialDelay is the wait before reconnection attempt n (redialDelay
	// when nil).
	RedialDelay func(n int) time.Duration
	// Client is what every session.start, session.resume and session.fork
	// of this TUI carries besides its own fields: the client's overrides
	// and provider key (scv flags and SCV_* environment).
	Client ClientSettings
	// Attach, when set, makes the connection and the session after the
	// first frame (attach.go): the model starts connecting, with Session
	// holding only what is shown before (workspace, configured model),
	// and Sender nil. Adopt starts pumping the events of the attached
	// connection into the program; it is called on the program's
	// goroutine once the session is known.
	Attach func() AttachedMsg
	Adopt  func(Sender)
	// Notify is how the TUI calls for attention (notify.go): NotifyBell
	// (the default when empty), NotifyOSC9, NotifyOSC777 or NotifyOff;
	// NotifyAfter is the wait after which it does so in a focused
	// terminal too (10 s when 0).
	Notify      string
	NotifyAfter time.Duration
}

// ClientSettings are the client's session overrides and provider key.
// The overrides are the ones the user set (flags, SCV_* variables): a
// resume or fork sends them too, and without them a stored session keeps
// its endpoint. ProviderKeyBaseURL is the base URL the key is for.
type ClientSettings struct {
	Model, Provider, BaseURL                        string
	ProviderKeyEnv, ProviderKey, ProviderKeyBaseURL string
}

// start is a session.start in cwd with the client's settings.
func (c ClientSettings) start(requestID, cwd string) *proto.SessionStart {
	return &proto.SessionStart{Envelope: proto.Envelope{RequestID: requestID}, Cwd: cwd, Model: c.Model, Provider: c.Provider,
		BaseURL: c.BaseURL, Origin: proto.OriginTUI, ProviderKeyEnv: c.ProviderKeyEnv, ProviderKey: c.ProviderKey, ProviderKeyBaseURL: c.ProviderKeyBaseURL}
}

// resume is a session.resume of id with the client's overrides and key.
func (c ClientSettings) resume(requestID, id string) *proto.SessionResume {
	return &proto.SessionResume{Envelope: proto.Envelope{RequestID: requestID}, SessionID: id, Provider: c.Provider, Model: c.Model,
		BaseURL: c.BaseURL, ProviderKeyEnv: c.ProviderKeyEnv, ProviderKey: c.ProviderKey, ProviderKeyBaseURL: c.ProviderKeyBaseURL}
}

// fork is a session.fork of id before turn with the client's overrides
// and key.
func (c ClientSettings) fork(requestID, id, turn string) *proto.SessionFork {
	return &proto.SessionFork{Envelope: proto.Envelope{RequestID: requestID}, SessionID: id, TurnID: turn, Origin: proto.OriginTUI,
		Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL,
		ProviderKeyEnv: c.ProviderKeyEnv, ProviderKey: c.ProviderKey, ProviderKeyBaseURL: c.ProviderKeyBaseURL}
}

// EventMsg delivers a server event to the model.
type EventMsg struct{ Event proto.Event }

// DisconnectedMsg says the connection to the daemon ended. Conn, when
// set, is the connection that ended: the end of a connection already
// replaced is ignored.
type DisconnectedMsg struct {
	Err  error
	Conn Sender
}

// tickMsg refreshes the elapsed time while a turn runs.
type tickMsg struct{}

type connState int

const (
	connected connState = iota
	disconnected
	reconnecting
	// connecting is the first attach (Config.Attach): no session yet.
	connecting
)

// pendingPrompt is a prompt sent but not yet started as a turn.
type pendingPrompt struct {
	requestID string
	text      string
	chips     string // the chips of its images, "" without

	queued bool // the server answered queue.enqueued
}

// answeredApproval is an approval whose answer was sent: shown again when
// the server refuses the answer.
type answeredApproval struct {
	requestID string
	req       *approvalReq
}

// Model is the Bubble Tea model of the TUI. Use it through a pointer.
type Model struct {
	cfg     Config
	now     func() time.Time
	session proto.SessionStarted
	send    Sender

	width, height int
	conn          connState
	connErr       error
	quitting      bool
	// early are the prompts entered while connecting (attach.go) and
	// attachErr why the first attach failed.
	early     []earlyPrompt
	attachErr error

	tr     *transcript
	render *renderer
	scroll int // lines scrolled up from the bottom
	// anchor is the topmost item of the last frame and anchorLines the
	// lines from it to the bottom; they keep a scrolled view in place.
	anchor      *item
	anchorLines int

	composer composer
	history  []string
	histIdx  int
	draft    string

	turnID    string
	turnStart time.Time
	lastTurn  time.Duration
	streaming *item
	// thinking is the reasoning row receiving fragments; turnThinking are
	// the turn's reasoning rows, collapsed when it ends.
	thinking     *item
	turnThinking []*item
	pending      []pendingPrompt
	// images are attached to the next prompt (/image, a pasted path).
	images   []attachedImage
	approval *approvalReq
	answered *answeredApproval
	// quiet are request ids whose turn_not_found or approval_not_found
	// answer is no error to show (a cancel of a turn that just ended).
	quiet map[string]bool
	// grants is the last list of session grants; grantsReq the request
	// whose answer is shown.
	grants    []proto.Grant
	grantsReq string
	reqSeq    int
	usage     proto.Usage
	haveUsage bool
	// spend is the session's tokens and cost (cost.go).
	spend     spend
	compacted int
	ticking   bool // one tick chain refreshes the elapsed time

	// st is the stored side of the session (replay.go); picker, when
	// set, takes the transcript's place (picker.go).
	st     storedState
	picker *picker

	// menu is the slash-command menu (slash.go); modelsReq, configureReq
	// and newReq are the pending models.list, session.configure and /new
	// session.start; undoReq the pending session.undo and undo its
	// confirmation panel (undo.go).
	menu         slashMenu
	modelsReq    string
	configureReq string
	// listing is the profile whose models modelsReq asks for ("" for the
	// session's own); profiles are the configured profiles the last
	// listing named.
	listing  string
	profiles []proto.Profile
	newReq   string
	undoReq  string
	undo     *undoPanel
	// cust holds the custom commands and the pending /compact (custom.go).
	cust customState
	// rd is the state of reconnecting (reconnect.go).
	rd redial
	// nt is the state of notifications (notify.go).
	nt notifyState
	// at is the `@` completion (mention.go).
	at atState
	// pl is the mode and the todo list (plan.go).
	pl planState
}

// New builds the model for one started session.
func New(cfg Config) *Model {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	m := &Model{
		cfg:     cfg,
		now:     now,
		session: *visibleEvent(&cfg.Session),
		send:    cfg.Sender,
		width:   max(cfg.Width, 20),
		height:  max(cfg.Height, 8),
		tr:      newTranscript(cfg.MaxItems),
		quiet:   map[string]bool{},
		render:  &renderer{styles: defaultStyles()},
	}
	m.composer = newComposer()
	if cfg.Attach != nil {
		m.conn = connecting
	}
	m.layout()
	m.pl.mode = proto.ModeDefault
	if cfg.Resumed != nil {
		m.openResumed(cfg.Resumed)
	}
	if cfg.Notice != "" {
		m.addItem(&item{kind: kindNotice, text: cfg.Notice})
	}
	return m
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd {
	if m.conn == connecting {
		return m.attachCmd()
	}
	if m.cust.listReq == "" {
		m.requestCommands()
	}
	if m.cfg.OpenPicker {
		m.openSessions(false)
	}
	return nil
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.update(msg)
	if m.rd.due {
		m.rd.due = false
		cmd = tea.Batch(cmd, m.redialCmd())
	}
	return m, cmd
}

func (m *Model) delay(n int) time.Duration {
	if m.cfg.RedialDelay != nil {
		return m.cfg.RedialDelay(n)
	}
	return redialDelay(n)
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.layout()
		return m, nil
	case EventMsg:
		return m, m.handleEvent(msg.Event)
	case AttachedMsg:
		return m, m.attached(msg)
	case DisconnectedMsg:
		if msg.Conn == nil || msg.Conn == m.send {
			m.disconnect(msg.Err)
		}
		return m, nil
	case redialTickMsg:
		if msg.gen == m.rd.gen && m.conn == reconnecting {
			return m, m.dialCmd(msg.gen)
		}
		return m, nil
	case redialMsg:
		m.redialed(msg)
		return m, nil
	case mentionBatchMsg:
		return m, m.mentionBatch(msg)
	case tickMsg:
		if m.turnID != "" {
			return m, tea.Batch(tick(), m.notifyWaiting())
		}
		m.ticking = false
		return m, nil
	case tea.FocusMsg:
		m.nt.blurred = false
		return m, nil
	case tea.BlurMsg:
		m.nt.blurred = true
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.handleKey(msg)
		m.refreshCommands()
		return m, cmd
	case tea.MouseWheelMsg:
		m.wheel(msg.Button)
		return m, nil
	case tea.PasteMsg:
		return m, m.paste(msg)
	}
	return m, nil
}

// paste gives pasted text to the first overlay that takes it, else
// attaches the images it names, else puts it in the composer.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	for _, o := range m.overlays() {
		if p, ok := o.(pasteTaker); ok && p.paste(m, msg.Content) {
			return nil
		}
	}
	if m.pasteImages(msg.Content) {
		return nil
	}
	if refused := m.composer.Update(msg); refused != "" {
		m.addItem(&item{kind: kindError, text: refused})
	}
	m.layout()
	return m.mentionWalk()
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}

// sendMsg writes msg; a failure means the connection is gone.
func (m *Model) sendMsg(msg proto.Message) bool {
	if m.conn != connected || m.send == nil {
		return false
	}
	if err := m.send.Send(msg); err != nil {
		m.disconnect(err)
		return false
	}
	return true
}

func (m *Model) nextRequestID() string {
	m.reqSeq++
	return "tui-" + strconv.Itoa(m.reqSeq)
}

func (m *Model) disconnect(err error) {
	if m.conn != connected {
		return
	}
	m.conn, m.connErr = disconnected, err
	m.rd.offer = false
	m.turnID, m.approval, m.pending, m.answered = "", nil, nil, nil
	if m.streaming != nil {
		m.streaming.streaming = false
		m.streaming.touch()
		m.streaming = nil
	}
	for _, it := range m.tr.tools {
		if !it.state.finished() {
			it.state = toolCancelled
			it.touch()
		}
	}
	reason := "the connection to the SCV daemon was lost"
	if m.cfg.Socket != "" {
		reason = "the connection to the SCV daemon on " + m.cfg.Socket + " was lost"
	}
	if err != nil {
		reason += " (" + err.Error() + ")"
	}
	if m.startRedial() {
		m.addItem(&item{kind: kindError, text: "daemon disconnected, reconnecting… (" + reason + "; the transcript is kept; Esc stops trying, Ctrl+C quits)"})
		return
	}
	m.addItem(&item{kind: kindError, text: fmt.Sprintf("%s. The transcript is kept but nothing can be sent. Restart the daemon with `scv run` (foreground) or `scv start` (background), then run `scv` again; Ctrl+C quits.", reason)})
}

// result is the session shown and whether it is stored: the server
// stores a session with its first turn.
func (m *Model) result() Result {
	return Result{SessionID: m.session.SessionID, Stored: len(m.st.turns) > 0, Unsent: m.unsent()}
}

// addItem appends to the transcript.
func (m *Model) addItem(it *item) *item { return m.tr.add(it) }
