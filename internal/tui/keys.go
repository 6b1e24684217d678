package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// handleKey routes a key press: the overlays top first (overlay.go), then
// the global keys, then the composer.
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	for _, o := range m.overlays() {
		if handled, cmd := o.update(m, k); handled {
			return cmd
		}
	}
	if cmd, ok := m.globalKey(k); ok {
		return cmd
	}
	m.composer.Update(k)
	m.layout()
	return m.mentionWalk()
}

// globalKey handles the keys that work whatever overlay is shown, when
// none took the key; false leaves it to the composer.
func (m *Model) globalKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	s := k.String()
	if s == "y" && m.approval == nil && m.tr.sel != nil && m.composer.Value() == "" {
		return m.copySelected(), true
	}
	switch s {
	case "enter":
		return m.submit(), true
	case "esc":
		m.escape()
	case "ctrl+p":
		if m.conn == connected {
			m.openSessions(false)
		}
	case "ctrl+r":
		m.openRewind()
	case "ctrl+c":
		return m.interrupt(), true
	case "pgup":
		if m.st.atTop {
			m.loadOlder()
		}
		m.scroll += max(m.bodyHeight()-1, 1)
	case "pgdown":
		m.scroll = max(m.scroll-max(m.bodyHeight()-1, 1), 0)
	case "ctrl+o":
		m.toggleExpand()
	case "alt+up":
		m.selectRow(-1)
	case "alt+down":
		m.selectRow(1)
	case "up":
		return nil, m.composer.AtFirstRow() && m.historyStep(-1)
	case "down":
		return nil, m.composer.AtLastRow() && m.historyStep(1)
	default:
		return nil, false
	}
	return nil, true
}

// escape is Esc with no overlay taking it: stop reconnecting, else leave
// a rewind, else cancel the turn (denying a shown approval with it).
func (m *Model) escape() {
	switch {
	case m.conn == reconnecting:
		m.stopRedial()
	case m.st.rewind != nil && m.approval == nil:
		m.cancelRewind()
	default:
		m.cancelTurn()
	}
}

// interrupt is Ctrl+C: clear the input, else cancel the turn, else quit.
func (m *Model) interrupt() tea.Cmd {
	switch {
	case m.composer.Value() != "":
		m.composer.Reset()
		m.histIdx = len(m.history)
		m.layout()
	case m.turnID != "" && m.conn == connected:
		m.cancelTurn()
	default:
		m.quitting = true
		return tea.Quit
	}
	return nil
}

// selectRow moves the selection d tool rows or answers (Alt+Up/Down);
// past the latest it goes back to following the transcript's end.
func (m *Model) selectRow(d int) {
	if !m.tr.selectStep(d) {
		return
	}
	if m.tr.sel == nil {
		m.scroll, m.anchor = 0, nil
	} else {
		m.showItem(m.tr.sel)
	}
}

// approvalKey answers the shown approval with a key (y approve, n deny,
// a allow for the session, s save a rule, r deny with a reason) or
// scrolls its summary; false for other keys, and for an arrow when the
// summary fits.
func (m *Model) approvalKey(s string) bool {
	switch s {
	case "y", "Y":
		m.resolveApproval(proto.ApprovalResolve{Approved: true})
	case "n", "N":
		m.resolveApproval(proto.ApprovalResolve{})
	case "a", "A":
		m.allowForSession()
	case "s", "S":
		m.saveRule()
	case "r", "R":
		m.approval.mode, m.approval.input = modeReason, ""
	case "up":
		return m.scrollApproval(-1)
	case "down":
		return m.scrollApproval(1)
	default:
		return false
	}
	return true
}

// resolveApproval sends the answer r to the shown approval (its ids are
// filled in here) and closes the panel. The panel is kept aside until the
// call moves on: a refused answer (invalid_request) shows it again.
func (m *Model) resolveApproval(r proto.ApprovalResolve) {
	a := m.approval
	m.approval = nil
	m.layout()
	r.RequestID, r.SessionID, r.ApprovalID = m.nextRequestID(), m.session.SessionID, a.id
	a.mode, a.input = modeChoose, ""
	m.answered = &answeredApproval{requestID: r.RequestID, req: a}
	if r.CancelTurn {
		m.quiet[r.RequestID] = true
	}
	m.sendMsg(&r)
	if it, found := m.tr.tools[a.callID]; found {
		switch {
		case r.CancelTurn:
			it.state = toolCancelled
		case r.Approved:
			it.state = toolPending
		default:
			it.state = toolDenied
		}
		it.touch()
	}
}

// allowForSession answers "allow for this session": at once for a tool
// grant, after the prefix is confirmed for a command.
func (m *Model) allowForSession() {
	a := m.approval
	switch {
	case a.grant == nil:
		m.addItem(&item{kind: kindNotice, text: "this call cannot be allowed for the session (the server offers no grant for it); y approves it once"})
	case a.editsGrant():
		a.mode, a.input = modePrefix, a.grant.Prefix+a.grant.Path
	default:
		// The grant is announced when the call starts (tool.started
		// says what the server granted).
		m.resolveApproval(proto.ApprovalResolve{Approved: true, Scope: proto.ScopeSession})
	}
}

// saveRule answers "always (save rule)": the offered grant, its prefix or
// path confirmed first, is saved by the server as an allow rule in the
// user config; tool.started.granted says what was saved, and a refusal
// (the file changed or does not load) shows the panel again with the
// reason.
func (m *Model) saveRule() {
	a := m.approval
	switch {
	case a.grant == nil:
		m.addItem(&item{kind: kindNotice, text: "no rule can cover this call (the server offers no grant for it); y approves it once"})
	case a.editsGrant():
		a.mode, a.input, a.save = modePrefix, a.grant.Prefix+a.grant.Path, true
	default:
		m.resolveApproval(proto.ApprovalResolve{Approved: true, Scope: proto.ScopeRule})
	}
}

// editApproval handles a key while the prefix or the reason is edited.
func (m *Model) editApproval(k tea.KeyPressMsg) {
	a := m.approval
	limit := a.inputLimit()
	switch k.String() {
	case "esc":
		a.mode, a.input, a.save = modeChoose, "", false
	case "enter":
		text := strings.TrimSpace(a.input)
		if a.mode == modePrefix {
			r, ok := a.editedGrant(text)
			if !ok {
				return
			}
			m.resolveApproval(r)
			return
		}
		m.resolveApproval(proto.ApprovalResolve{Reason: text})
	case "backspace":
		r := []rune(a.input)
		if len(r) > 0 {
			a.input = string(r[:len(r)-1])
		}
	case "ctrl+u":
		a.input = ""
	case "ctrl+w":
		a.input = strings.TrimRight(a.input, " ")
		if i := strings.LastIndexByte(a.input, ' '); i >= 0 {
			a.input = a.input[:i+1]
		} else {
			a.input = ""
		}
	case "space":
		a.appendInput(" ", limit)
	default:
		if k.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			a.appendInput(k.Text, limit)
		}
	}
}

// appendInput adds typed or pasted text to the edited line: one line,
// printable characters only, within limit bytes.
func (a *approvalReq) appendInput(text string, limit int) {
	text = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, text)
	if len(a.input)+len(text) <= limit {
		a.input += text
	}
}

// maxPrefixBytes bounds a typed prefix (the server's own bound).
const maxPrefixBytes = 256

// inputLimit bounds the line typed: a prefix, or a reason.
func (a *approvalReq) inputLimit() int {
	if a.mode == modePrefix {
		return maxPrefixBytes
	}
	return proto.MaxReasonBytes
}

// cancelTurn cancels the running turn. A shown approval is denied in the
// same step (approval.resolve with cancel_turn), so the turn cannot go on
// to another model request between the denial and the cancel. An answer
// saying the turn or approval is already over is not an error for the
// user: the turn they wanted stopped has stopped.
func (m *Model) cancelTurn() {
	if m.approval != nil {
		m.resolveApproval(proto.ApprovalResolve{CancelTurn: true})
		return
	}
	if m.turnID == "" {
		return
	}
	id := m.nextRequestID()
	m.quiet[id] = true
	m.sendMsg(&proto.TurnCancel{Envelope: proto.Envelope{RequestID: id},
		SessionID: m.session.SessionID, TurnID: m.turnID})
}

func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.composer.Value())
	if text == "" {
		switch {
		case m.rd.offer:
			m.resumeAfterReconnect("")
		case m.conn == disconnected && m.startRedial():
			m.addItem(&item{kind: kindNotice, text: "reconnecting… (Esc stops trying)"})
		case len(m.images) > 0:
			m.addItem(&item{kind: kindNotice, text: "type a prompt to send with the attached images (/image clear removes them)"})
		}
		return nil
	}
	if custom, args, ok := m.customCommand(text); ok {
		m.composer.Reset()
		m.layout()
		m.runCustom(custom, args)
		return nil
	}
	name, args, prompt, refused := slashPrompt(text)
	switch {
	case refused != "":
		// The text stays in the composer, selected: what is typed next
		// replaces it (so "/compact" then "/cost" never becomes the
		// prompt "/compact/cost"), while an arrow key or Home/End keeps
		// it to be fixed or doubled (//).
		m.composer.SelectAll()
		if m.conn == connecting {
			// The session's own commands are not listed yet: any
			// command waits for it rather than being called unknown.
			refused = stillConnecting
		}
		m.addItem(&item{kind: kindError, text: refused})
		m.scroll = 0
		return nil
	case name != "":
		m.composer.Reset()
		m.layout()
		return m.runCommand(name, args)
	}
	text = prompt
	if m.conn == connecting {
		if m.keepEarly(text) {
			m.composer.Reset()
			m.scroll = 0
			m.layout()
		}
		return nil
	}
	if m.conn != connected {
		text := "not connected: start the daemon with `scv run` or `scv start` and run `scv` again"
		if m.cfg.Redial != nil {
			text = "not connected (nothing was sent): start the daemon with `scv start` (or `scv run`); Enter on an empty composer reconnects"
		}
		m.addItem(&item{kind: kindError, text: text})
		return nil
	}
	if limit := m.promptLimit(); len(text) > limit {
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("prompt of %d bytes is over the %d-byte limit (session.max_prompt_bytes); shorten it", len(text), limit)})
		return nil
	}
	if m.st.rewind != nil {
		m.forkWith(text)
		return nil
	}
	if m.rd.offer {
		m.resumeAfterReconnect(text)
		m.remember(text)
		m.composer.Reset()
		m.layout()
		return nil
	}
	if m.sendPrompt(text) {
		m.composer.Reset()
		m.scroll, m.tr.sel = 0, nil
		m.layout()
	}
	return nil
}

// sendPrompt starts a turn with text, remembered in the history; false
// when it could not be sent.
func (m *Model) sendPrompt(text string) bool {
	if !m.sendTurn(text) {
		return false
	}
	m.remember(text)
	return true
}

// sendTurn starts a turn with text and the attached images; false when it
// could not be sent (the images stay attached).
func (m *Model) sendTurn(text string) bool {
	id := m.nextRequestID()
	saved := m.images
	images, chips := m.takeImages()
	if !m.sendMsg(&proto.TurnStart{Envelope: proto.Envelope{RequestID: id}, SessionID: m.session.SessionID, Prompt: text, Images: images}) {
		m.images = saved
		return false
	}
	m.pending = append(m.pending, pendingPrompt{requestID: id, text: text, chips: chips})
	return true
}

func (m *Model) contextReport() string {
	used := "unknown until the first turn completes"
	if m.haveUsage {
		used = tokens(m.usage.InputTokens) + " tokens in context"
		if m.session.ContextMaxTokens > 0 {
			used += fmt.Sprintf(" (%d%% of %s)", pct(m.usage.InputTokens, m.session.ContextMaxTokens), tokens(m.session.ContextMaxTokens))
		}
	}
	return fmt.Sprintf("context: model %s · window %s tokens · %s · %s tokens used this session · %d compactions",
		orDash(m.session.Model), tokens(m.session.ContextMaxTokens), used, tokens(m.spend.total.TotalTokens), m.compacted)
}

func pct(n int64, of int) int64 {
	if of <= 0 {
		return 0
	}
	return n * 100 / int64(of)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// remember adds a submitted prompt to the history (no repeats in a row).
func (m *Model) remember(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		if len(m.history) > 1000 {
			m.history = m.history[len(m.history)-1000:]
		}
	}
	m.histIdx, m.draft = len(m.history), ""
}

// historyStep moves through prompt history; false when there is nowhere
// to go (the key then moves the cursor).
func (m *Model) historyStep(d int) bool {
	i := m.histIdx + d
	if i < 0 || i > len(m.history) || len(m.history) == 0 {
		return false
	}
	if m.histIdx == len(m.history) {
		m.draft = m.composer.Value()
	}
	m.histIdx = i
	if i == len(m.history) {
		m.composer.SetValue(m.draft)
	} else {
		m.composer.SetValue(m.history[i])
	}
	m.layout()
	return true
}

// wheelLines is how far one wheel notch scrolls.
const wheelLines = 3

// wheel scrolls the transcript (or moves the picker's cursor, or scrolls
// the undo panel) by a wheel notch.
func (m *Model) wheel(b tea.MouseButton) {
	up := b == tea.MouseWheelUp
	if !up && b != tea.MouseWheelDown {
		return
	}
	for _, o := range m.overlays() {
		if w, ok := o.(wheelTaker); ok {
			w.wheel(m, up)
			return
		}
	}
	switch {
	case up:
		if m.st.atTop {
			m.loadOlder()
		}
		m.scroll += wheelLines
	default:
		m.scroll = max(m.scroll-wheelLines, 0)
	}
}

// toggleExpand expands or collapses the selected row, else the latest
// row with output or a diff; a selected row stays in view.
func (m *Model) toggleExpand() {
	it := m.tr.target()
	if it == nil {
		return
	}
	if m.render.expanded == it {
		m.render.expanded = nil
	} else {
		m.render.expanded = it
	}
	if it == m.tr.sel {
		m.showItem(it)
	}
}

// showItem scrolls the transcript so that it is in view, its first line
// at the top when it was not.
func (m *Model) showItem(it *item) {
	m.render.target, m.render.selected = m.tr.target(), m.tr.sel
	n, ok := m.linesDownFrom(it)
	if !ok {
		return
	}
	k, h := len(it.render(m.width, m.render)), m.bodyHeight()
	if n > m.scroll+h || n-k < m.scroll {
		m.scroll = max(n-h, 0)
	}
	// The offset is set for the lines as they are now: the next frame
	// must not shift it again for lines added since the last one.
	m.anchor = nil
}

// approvalsCommand lists the session's grants (/approvals) or revokes
// them (/approvals revoke N, /approvals revoke all); N numbers the last
// list shown.
func (m *Model) approvalsCommand(args []string) {
	if m.conn != connected {
		m.addItem(&item{kind: kindError, text: "not connected; the grants ended with the session"})
		return
	}
	if len(args) == 0 {
		m.grantsReq = m.nextRequestID()
		m.sendMsg(&proto.ApprovalGrantsRequest{Envelope: proto.Envelope{RequestID: m.grantsReq}, SessionID: m.session.SessionID})
		return
	}
	usage := "usage: /approvals lists the session's grants; /approvals revoke N revokes grant N of that list; /approvals revoke all revokes them all"
	if args[0] != "revoke" || len(args) != 2 {
		m.addItem(&item{kind: kindError, text: usage})
		return
	}
	var ids []string
	if args[1] == "all" {
		for _, g := range m.grants {
			ids = append(ids, g.GrantID)
		}
	} else {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(m.grants) {
			m.addItem(&item{kind: kindError, text: fmt.Sprintf("no grant %q in the last list (%d grants); /approvals shows the list", args[1], len(m.grants))})
			return
		}
		ids = []string{m.grants[n-1].GrantID}
	}
	if len(ids) == 0 {
		m.addItem(&item{kind: kindNotice, text: "no grants to revoke"})
		return
	}
	for _, id := range ids {
		m.grantsReq = m.nextRequestID()
		m.sendMsg(&proto.ApprovalRevoke{Envelope: proto.Envelope{RequestID: m.grantsReq}, SessionID: m.session.SessionID, GrantID: id})
	}
}

// grantsListed shows the grants of an approval.grants answer and keeps
// them for /approvals revoke N. Only the answer to the latest request is
// shown (revoking all sends one request per grant).
func (m *Model) grantsListed(e *proto.ApprovalGrantsReply) {
	m.grants = e.Grants
	if e.RequestID != m.grantsReq {
		return
	}
	if len(e.Grants) == 0 {
		m.addItem(&item{kind: kindNotice, text: "no session grants: every call that needs approval is asked (in an approval, a allows such calls for the rest of the session)"})
		m.rulesListed(e.Rules)
		return
	}
	var b strings.Builder
	b.WriteString("session grants (these calls run without asking until the session ends):")
	for i, g := range e.Grants {
		fmt.Fprintf(&b, "\n%d. %s", i+1, grantText(g))
	}
	b.WriteString("\n/approvals revoke N revokes one · /approvals revoke all revokes them all")
	m.addItem(&item{kind: kindNotice, text: b.String()})
	m.rulesListed(e.Rules)
}

// rulesListed shows the saved rules that apply to the session, after its
// grants.
func (m *Model) rulesListed(rules []proto.Grant) {
	if len(rules) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("saved rules (deny beats allow; edit the file to remove one):")
	for _, r := range rules {
		fmt.Fprintf(&b, "\n· %s", ruleText(r))
	}
	m.addItem(&item{kind: kindNotice, text: b.String()})
}

// promptLimit is the longest prompt the session takes: what the server
// said in session.started (session.max_prompt_bytes), else the default.
func (m *Model) promptLimit() int {
	if m.session.MaxPromptBytes > 0 {
		return m.session.MaxPromptBytes
	}
	return proto.MaxPromptBytes
}
