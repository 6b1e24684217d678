package tui

import (
	_ "embed"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
)

// Slash commands (docs/tui.md): a prompt whose first word is /name runs
// the local command name; the menu opens when the composer holds only a
// slash word. What counts as a command and what as a prompt:
//   - "//text" is the prompt "/text" (one slash removed);
//   - a first word with another slash in it ("/etc/hosts is odd") is a
//     path, so the text is a prompt;
//   - any other "/word" must name a command; an unknown one is refused
//     with a hint and nothing is sent.

// helpFile is what /help shows: the keys, the commands and plan mode,
// one paragraph a line (its final newline is not shown).
//
//go:embed help.txt
var helpFile string

// slashCmd is one command of the menu.
type slashCmd struct {
	name string // with its slash
	args string // usage of the arguments, "" when it takes none
	desc string
}

// slashCommands lists the commands in menu order. A function, not a
// package variable: nothing is built unless the TUI runs.
func slashCommands() []slashCmd {
	return []slashCmd{
		{"/model", "[-p PROFILE] [NAME]", "switch the model, or the provider profile, for the next turns"},
		{"/new", "", "close this session and start a fresh one in this workspace"},
		{"/clear", "", "start the conversation afresh (idle only)"},
		{"/context", "", "context window use and session tokens"},
		{"/compact", "[focus]", "replace the conversation with the model's summary (idle only)"},
		{"/init", "", "ask the model to write or improve AGENTS.md (you approve the write)"},
		{"/cost", "", "tokens and cost of each turn and of the session"},
		{"/approvals", "[revoke N|all]", "list or revoke this session's grants"},
		{"/undo", "", "restore the files the last turn wrote (asks first)"},
		{"/copy", "[code]", "copy the last answer (or its last code block) to the clipboard"},
		{"/help", "", "keys and commands"},
		{"/sessions", "", "the stored sessions picker (Ctrl+P)"},
		{"/resume", "", "the stored sessions picker (same as /sessions)"},
		{"/rewind", "", "edit an earlier prompt and fork from it (Ctrl+R)"},
		{"/image", "[PATH|clear]", "attach an image file (PNG, JPEG, GIF, WebP) to the next prompt"},
		{"/quit", "", "leave"},
		{"/plan", "", "enter or leave plan mode (Shift+Tab)"},
	}
}

// maxMenuRows bounds the menu's height.
const maxMenuRows = 8

// slashMenu is the open command menu: sel is the highlighted row of the
// filtered list; closedAt is the composer text Esc closed it for (it
// opens again when the text changes).
type slashMenu struct {
	sel      int
	closedAt string
	// lines is the last rendered menu, valid while key holds: a frame
	// asks for it twice (layout and drawing).
	lines []string
	key   menuKey
}

type menuKey struct {
	text, closedAt       string
	sel, width, height   int
	picker, panel, valid bool
}

// menuWord is the slash word the menu filters by, and whether the
// composer text is one (a single line, one word, one leading slash).
func menuWord(text string) (string, bool) {
	if !strings.HasPrefix(text, "/") || strings.HasPrefix(text, "//") {
		return "", false
	}
	if strings.ContainsAny(text, " \t\n") || strings.Contains(text[1:], "/") {
		return "", false
	}
	return text, true
}

// menuItems are the commands matching the composer text; nil when the
// menu is not shown.
func (m *Model) menuItems() []slashCmd {
	if m.picker != nil || m.approval != nil || m.undo != nil {
		return nil
	}
	text := m.composer.Value()
	w, ok := menuWord(text)
	if !ok || text == m.menu.closedAt {
		return nil
	}
	var out []slashCmd
	for _, c := range append(slashCommands(), m.customMenu()...) {
		if strings.HasPrefix(c.name, w) {
			out = append(out, c)
		}
	}
	return out
}

// menuKey handles a key while the menu is shown; false leaves the key to
// the composer.
func (m *Model) menuKey(k tea.KeyPressMsg, items []slashCmd) (tea.Cmd, bool) {
	sel := min(m.menu.sel, len(items)-1)
	switch k.String() {
	case "up":
		m.menu.sel = (sel + len(items) - 1) % len(items)
		return nil, true
	case "down":
		m.menu.sel = (sel + 1) % len(items)
		return nil, true
	case "tab":
		c := items[sel]
		v := c.name
		if c.args != "" {
			v += " "
		}
		m.composer.SetValue(v)
		m.menu.sel = 0
		m.layout()
		return nil, true
	case "esc":
		m.menu.closedAt = m.composer.Value()
		return nil, true
	case "enter":
		name := items[sel].name
		m.menu.sel = 0
		m.composer.Reset()
		m.layout()
		return m.runCommand(name, nil), true
	}
	m.menu.sel = 0
	return nil, false
}

// menuLines renders the menu above the composer.
func (m *Model) menuLines() []string {
	key := menuKey{text: m.composer.Value(), closedAt: m.menu.closedAt, sel: m.menu.sel, width: m.width, height: m.height,
		picker: m.picker != nil, panel: m.approval != nil || m.undo != nil, valid: true}
	if m.menu.key == key {
		return m.menu.lines
	}
	m.menu.lines, m.menu.key = m.renderMenu(), key
	return m.menu.lines
}

func (m *Model) renderMenu() []string {
	items := m.menuItems()
	if len(items) == 0 {
		return nil
	}
	st := m.render.styles
	rows := min(len(items), maxMenuRows, max(m.height-8, 2))
	sel := min(m.menu.sel, len(items)-1)
	first := max(0, min(sel-rows/2, len(items)-rows))
	var out []string
	for i := first; i < first+rows; i++ {
		c := items[i]
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		line := fmt.Sprintf("  %-28s %s", name, c.desc)
		if i == sel {
			line = st.accent.Render("▸" + ansi.Truncate(line[1:], m.width-1, "…"))
		} else {
			line = st.dim.Render(ansi.Truncate(line, m.width, "…"))
		}
		out = append(out, line)
	}
	if len(items) > rows {
		out = append(out, st.dim.Render(ansi.Truncate(fmt.Sprintf("  … %d commands · ↑/↓ select · tab complete · enter run · esc close", len(items)), m.width, "…")))
	} else {
		out = append(out, st.dim.Render(ansi.Truncate("  ↑/↓ select · tab complete · enter run · esc close", m.width, "…")))
	}
	return out
}

// slashPrompt sorts a submitted text: a command to run (name and
// arguments), a prompt to send (text, with a doubled slash undone), or a
// refusal (the hint to show).
func slashPrompt(text string) (name string, args []string, prompt string, refused string) {
	if !strings.HasPrefix(text, "/") {
		return "", nil, text, ""
	}
	if strings.HasPrefix(text, "//") {
		return "", nil, text[1:], ""
	}
	f := strings.Fields(text)
	word := f[0]
	if strings.Contains(word[1:], "/") {
		return "", nil, text, "" // a path: /etc/hosts is odd
	}
	for _, c := range slashCommands() {
		if c.name == word {
			return word, f[1:], "", ""
		}
	}
	return "", nil, "", fmt.Sprintf("unknown command %s (nothing was sent); /help lists the commands · start the line with // to send a prompt beginning with /", oneLine(word))
}

// runCommand runs the local command name with its arguments.
func (m *Model) runCommand(name string, args []string) tea.Cmd {
	m.scroll = 0
	if m.conn == connecting && name != "/help" && name != "/quit" {
		// Commands act on a session: the text goes back, selected.
		m.composer.SetValue(strings.Join(append([]string{name}, args...), " "))
		m.composer.SelectAll()
		m.addItem(&item{kind: kindError, text: stillConnecting})
		return nil
	}
	if custom, rest, ok := m.customCommand(strings.Join(append([]string{name}, args...), " ")); ok {
		m.runCustom(custom, rest)
		return nil
	}
	takesArgs := name == "/model" || name == "/approvals" || name == "/copy" || name == "/image" || name == "/compact"
	if len(args) > 0 && !takesArgs {
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("%s takes no arguments (nothing was sent); /help lists the commands", name)})
		return nil
	}
	m.remember(strings.Join(append([]string{name}, args...), " "))
	switch name {
	case "/help":
		m.addItem(&item{kind: kindNotice, text: strings.TrimSuffix(helpFile, "\n")})
	case "/quit":
		m.quitting = true
		return tea.Quit
	case "/context":
		m.addItem(&item{kind: kindNotice, text: m.contextReport()})
	case "/cost":
		m.addItem(&item{kind: kindNotice, text: m.costReport()})
	case "/approvals":
		m.approvalsCommand(args)
	case "/sessions", "/resume":
		if m.conn != connected {
			m.addItem(&item{kind: kindError, text: "not connected; the sessions cannot be listed"})
		} else {
			m.openSessions(false)
		}
	case "/rewind":
		m.openRewind()
	case "/clear":
		switch {
		case m.conn != connected:
			m.addItem(&item{kind: kindError, text: "not connected; nothing to clear"})
		case m.turnID != "" || len(m.pending) > 0:
			m.addItem(&item{kind: kindError, text: "a turn is running; /clear works when the session is idle (Esc cancels the turn)"})
		default:
			m.sendMsg(&proto.SessionClear{Envelope: proto.Envelope{RequestID: m.nextRequestID()}, SessionID: m.session.SessionID})
		}
	case "/new":
		m.newSession()
	case "/model":
		m.modelCommand(args)
	case "/undo":
		m.undoCommand()
	case "/compact":
		m.compactCommand(args)
	case "/init":
		m.initCommand()
	case "/copy":
		return m.copyCommand(args)
	case "/image":
		m.imageCommand(args)
	case "/plan":
		m.cycleMode()
	}
	return nil
}

// newSession starts a fresh session in this workspace; the one shown is
// closed when the new one is open (session.started answers).
func (m *Model) newSession() {
	if m.refuseUnlessIdle("/new", "not connected; a new session needs the daemon") {
		return
	}
	id := m.nextRequestID()
	if m.sendMsg(m.cfg.Client.start(id, m.session.Cwd)) {
		m.newReq = id
	}
}

// refuseUnlessIdle shows why command, which needs a connected and idle
// session, cannot run now (offline says it for no connection) and
// reports whether it did.
func (m *Model) refuseUnlessIdle(command, offline string) bool {
	switch {
	case m.conn != connected:
		m.addItem(&item{kind: kindError, text: offline})
	case !m.idle():
		m.addItem(&item{kind: kindError, text: "a turn is running; " + command + " works when the session is idle (Esc cancels the turn)"})
	default:
		return false
	}
	return true
}

// newStarted shows the session /new started in place of the one shown.
func (m *Model) newStarted(e *proto.SessionStarted) {
	m.newReq = ""
	old := m.session.SessionID
	m.switchTo(&proto.SessionResumed{SessionID: e.SessionID, Cwd: e.Cwd, Model: e.Model, ContextMaxTokens: e.ContextMaxTokens, Tools: e.Tools,
		MaxPromptBytes: e.MaxPromptBytes})
	note := "new session started in " + m.session.Cwd
	if old != "" {
		note += "; the previous one is stored (/sessions opens it)"
	}
	m.addItem(&item{kind: kindNotice, text: note})
}

// commandError shows the refusal of a /model or /new request; false for
// an error answering anything else.
func (m *Model) commandError(e *proto.Error) bool {
	switch id := e.RequestID; {
	case id == "":
		return false
	case id == m.modelsReq && m.listing != "":
		m.profileListFailed(e)
		return true
	case m.customError(e):
		return true
	case id == m.modelsReq:
		m.modelsReq = ""
		if e.Code == proto.ErrUnsupported {
			m.addItem(&item{kind: kindNotice, text: "this provider cannot list its models; " + modelUsage})
			return true
		}
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("could not list the models (%s): %s; /model -p PROFILE [NAME] still moves the session to another provider profile", e.Code, e.Message)})
		return true
	case id == m.configureReq:
		m.configureReq = ""
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("the model was not changed (%s): %s", e.Code, e.Message)})
		return true
	case id == m.newReq:
		m.newReq = ""
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("could not start a new session (%s): %s", e.Code, e.Message)})
		return true
	case id == m.undoReq:
		return m.undoError(e)
	}
	return false
}

// slashOverlay is the slash-command menu on the overlay stack: the
// arrows select a command, Tab completes it, Enter runs it, Esc closes
// the menu.
type slashOverlay struct{}

func (slashOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	items := m.menuItems()
	if len(items) == 0 || m.browsingHistory(k) {
		return false, nil
	}
	cmd, ok := m.menuKey(k, items)
	return ok, cmd
}

func (slashOverlay) view(m *Model) []string { return m.menuLines() }
