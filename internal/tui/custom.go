package tui

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/proto"
)

// Custom commands, /compact and /init (docs/tui.md). The server lists the
// session's custom commands (it reads the workspace) and expands the one
// run; the TUI offers them in the slash menu after its own commands and
// shows the run as "/name args".

// initPrompt is the prompt /init sends.
//
//go:embed init.md
var initPrompt string

// customState is what the TUI knows of the session's custom commands
// and its pending commands.list and session.compact.
type customState struct {
	listReq string
	session string // the session the list is of
	list    []proto.CustomCommand
	// stale says the list is of another session (the one shown was
	// switched to): asked for when the menu opens.
	stale bool
	// listedAt is when the list arrived (zero: never); skipped is the
	// last notice of skipped files.
	listedAt   time.Time
	skipped    string
	compactReq string
}

// commandsMaxAge is how old the list may be when the menu opens before it
// is asked for again, so a command file added during a session shows up.
const commandsMaxAge = 30 * time.Second

// requestCommands asks for the session's custom commands; the list is
// dropped first, since it may belong to the session shown before.
func (m *Model) requestCommands() {
	if m.session.SessionID != m.cust.session {
		m.cust.skipped, m.cust.session = "", m.session.SessionID
	}
	m.cust.list, m.cust.listedAt = nil, time.Time{}
	// Not sent (not connected, no session yet): asked for again when the
	// menu opens.
	m.cust.stale = true
	if m.conn != connected || m.session.SessionID == "" {
		return
	}
	id := m.nextRequestID()
	if m.sendMsg(&proto.CommandsList{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID}) {
		m.cust.listReq, m.cust.stale = id, false
	}
}

// commandsListed keeps the listed commands except those named like a
// built-in one, and says once which files were skipped and why.
func (m *Model) commandsListed(e *proto.CommandsListed) {
	if e.RequestID == "" || e.RequestID != m.cust.listReq {
		return
	}
	m.cust.listReq = ""
	m.cust.listedAt = m.now()
	m.menu.key = menuKey{} // the menu shown is drawn again with the list
	builtin := map[string]bool{}
	for _, c := range slashCommands() {
		builtin[c.name] = true
	}
	var skipped []string
	m.cust.list = nil
	for _, c := range e.Commands {
		if builtin["/"+c.Name] {
			skipped = append(skipped, fmt.Sprintf("/%s (%s): the built-in /%s has that name; rename the file", c.Name, c.Source, c.Name))
			continue
		}
		m.cust.list = append(m.cust.list, c)
	}
	for _, s := range e.Skipped {
		skipped = append(skipped, s.File+": "+s.Reason)
	}
	// Said once per session, and again only when it changed.
	if note := strings.Join(skipped, " · "); note != m.cust.skipped {
		m.cust.skipped = note
		if note != "" {
			m.addItem(&item{kind: kindNotice, text: "custom commands skipped — " + note})
		}
	}
}

// refreshCommands asks for the list when the menu has just opened (the
// composer holds "/") and the list is of another session, or older than
// commandsMaxAge.
func (m *Model) refreshCommands() {
	c := &m.cust
	if m.composer.Value() != "/" || c.listReq != "" {
		return
	}
	if c.stale {
		m.requestCommands()
		return
	}
	if c.listedAt.IsZero() || m.now().Sub(c.listedAt) < commandsMaxAge {
		return
	}
	list, at := c.list, c.listedAt
	m.requestCommands()
	c.list, c.listedAt = list, at // kept for the menu until the new list arrives
}

// customMenu are the custom commands as menu entries; a workspace's is
// marked (repo): its prompt comes from the repository, not from the user.
func (m *Model) customMenu() []slashCmd {
	out := make([]slashCmd, 0, len(m.cust.list))
	for _, c := range m.cust.list {
		desc := c.Description
		if c.Source == proto.CommandWorkspace {
			desc = "(repo) " + desc
		}
		out = append(out, slashCmd{name: "/" + c.Name, args: "[args]", desc: desc})
	}
	return out
}

// customCommand finds the custom command a submitted text runs: its name
// and the text after the name (spacing and lines kept, ends trimmed).
func (m *Model) customCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexAny(word, "\t\n"); i >= 0 {
		word, rest = word[:i], text[1+i:]
	}
	for _, c := range m.cust.list {
		if c.Name == word {
			return c.Name, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// runCustom starts a turn of the custom command; the server reads and
// expands it, the transcript shows what was typed.
func (m *Model) runCustom(name, args string) {
	shown := "/" + name
	if args != "" {
		shown += " " + args
	}
	switch {
	case m.conn != connected:
		m.addItem(&item{kind: kindError, text: "not connected (nothing was sent); " + shown + " runs when the daemon is back"})
		return
	case m.st.rewind != nil:
		m.addItem(&item{kind: kindError, text: "a rewind edits a prompt: type the text to send there (custom commands start a turn of this session)"})
		return
	case m.notResumed(shown):
		return
	}
	m.startTurn(&proto.TurnStart{SessionID: m.session.SessionID, Command: name, Arguments: args}, shown)
}

// notResumed says (and shows) that the connection is back but the session
// shown is not open on it yet, so what would address it is not sent.
func (m *Model) notResumed(what string) bool {
	if !m.rd.offer {
		return false
	}
	m.addItem(&item{kind: kindError, text: "nothing was sent: press Enter on an empty composer to continue this session on the new connection, then " + what + " again"})
	return true
}

// startTurn sends t, shown in the transcript as shown.
func (m *Model) startTurn(t *proto.TurnStart, shown string) {
	t.RequestID = m.nextRequestID()
	if m.sendMsg(t) {
		m.pending = append(m.pending, pendingPrompt{requestID: t.RequestID, text: shown})
		m.remember(shown)
	}
}

// initCommand asks the model to write (or improve) the workspace's
// AGENTS.md; the write goes through the normal approval.
func (m *Model) initCommand() {
	if m.conn != connected {
		m.addItem(&item{kind: kindError, text: "not connected (nothing was sent); /init runs when the daemon is back"})
		return
	}
	if m.notResumed("/init") {
		return
	}
	m.startTurn(&proto.TurnStart{SessionID: m.session.SessionID, Prompt: strings.TrimSpace(initPrompt)}, "/init")
}

// compactCommand asks the server to replace the history with the model's
// summary, keeping focus (the arguments) in it.
func (m *Model) compactCommand(args []string) {
	switch {
	case m.conn != connected:
		m.addItem(&item{kind: kindError, text: "not connected; nothing to compact"})
	case m.notResumed("/compact"):
	case !m.idle():
		m.addItem(&item{kind: kindError, text: "a turn is running; /compact works when the session is idle (Esc cancels the turn)"})
	case m.cust.compactReq != "":
		m.addItem(&item{kind: kindError, text: "a compaction is already running"})
	default:
		id := m.nextRequestID()
		if m.sendMsg(&proto.SessionCompact{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID, Focus: strings.Join(args, " ")}) {
			m.cust.compactReq = id
			m.addItem(&item{kind: kindNotice, text: "compacting: the model is summarising the conversation…"})
		}
	}
}

// compactedOnRequest shows the answer to /compact.
func (m *Model) compactedOnRequest(e *proto.SessionCompacted) {
	if e.RequestID != m.cust.compactReq {
		return
	}
	m.cust.compactReq = ""
	m.compacted++
	m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("conversation compacted: %s → %s tokens, %d messages replaced by the model's summary",
		tokens(e.BeforeTokens), tokens(e.AfterTokens), e.RemovedMessages)})
	m.usage.InputTokens, m.haveUsage = int64(e.AfterTokens), true
	if e.Usage != nil {
		addUsage(&m.spend.total, *e.Usage)
	}
}

// customError shows a refused commands.list or session.compact; false
// for an error answering anything else.
func (m *Model) customError(e *proto.Error) bool {
	switch e.RequestID {
	case "":
		return false
	case m.cust.listReq:
		m.cust.listReq = ""
		if e.Code != proto.ErrInvalidRequest || !strings.Contains(e.Message, "unknown message type") {
			m.addItem(&item{kind: kindError, text: fmt.Sprintf("custom commands could not be listed (%s): %s", e.Code, e.Message)})
		}
		return true
	case m.cust.compactReq:
		m.cust.compactReq = ""
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("the conversation was not compacted (%s): %s", e.Code, e.Message)})
		return true
	}
	return false
}
