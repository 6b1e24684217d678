package tui

import (
	"context"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// mentionChip is how one `@` mention of a sent prompt shows in the
// transcript: its path in brackets, what was attached when less than the
// whole, and a cross when nothing was.
func mentionChip(m proto.Mention) string {
	switch {
	case m.Refused != "":
		return "[@" + m.Path + " ✗]"
	case m.Kind == proto.MentionImage:
		return "[@" + m.Path + " · image " + imagefile.Size(m.Bytes) + "]"
	case m.Truncated && m.Kind == proto.MentionDir:
		return "[@" + m.Path + " · partial listing]"
	case m.Truncated:
		return "[@" + m.Path + " · first " + sizeText(m.Bytes) + "]"
	}
	return "[@" + m.Path + "]"
}

func sizeText(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strconv.FormatInt(n/1024, 10) + " KiB"
}

// mentionLines are the chips of a prompt's mentions (wrapped to width)
// and, for each one refused, a line saying why.
func mentionLines(ms []proto.Mention, width int, r *renderer) []string {
	if len(ms) == 0 {
		return nil
	}
	chips := make([]string, len(ms))
	for i, m := range ms {
		chips[i] = mentionChip(m)
	}
	var out []string
	for _, l := range strings.Split(ansi.Wrap(strings.Join(chips, " "), max(width-2, 8), ""), "\n") {
		out = append(out, "  "+r.styles.accent.Render(l))
	}
	for _, m := range ms {
		if m.Refused != "" {
			for _, l := range strings.Split(ansi.Wrap("@"+m.Path+" not attached: "+m.Refused, max(width-4, 8), ""), "\n") {
				out = append(out, "    "+r.styles.dim.Render(l))
			}
		}
	}
	return out
}

// The `@` completion (docs/tui.md): typing `@` at the start of a word at
// the end of the composer text opens a popup of workspace paths ranked
// against what follows the `@`. The paths come from a bounded walk of the
// session's workspace (mention.Walker: .gitignore respected, links never
// followed) run a batch at a time in commands off the UI goroutine, and
// kept for the session: a walk restarts only for another workspace or
// after a turn (its tools may have added files).

// mentionRows bounds the popup's height; mentionBatch is how many paths
// one walk command collects.
const (
	mentionRows  = 8
	mentionBatch = 4096
)

// atState is the completion's state.
type atState struct {
	// ws is the workspace the index is of; idx what the walk found so
	// far; walker the walk still going (nil once over); stale asks for a
	// fresh walk the next time the popup opens.
	ws      string
	idx     *mention.Index
	walker  *mention.Walker
	walking bool
	limited bool
	stale   bool
	// gen tells a batch of an abandoned walk from the current one's.
	gen      int
	sel      int
	closedAt string
	// cache: the last query's ranked paths while the index holds n.
	cacheQ string
	cacheN int
	cache  []string
}

// mentionBatchMsg is one batch of the walk, with the walker: the
// command that ran it hands it back to the UI goroutine.
type mentionBatchMsg struct {
	w       *mention.Walker
	gen     int
	paths   []string
	done    bool
	limited bool
}

// mentionWord is the fragment after the `@` being typed, when the
// cursor is at the end of the text and the last word starts with `@`.
func (m *Model) mentionWord() (string, bool) {
	text := m.composer.Value()
	if text == "" || !m.composer.AtEnd() {
		return "", false
	}
	start := strings.LastIndexAny(text, " \n")
	word := text[start+1:]
	if !strings.HasPrefix(word, "@") || strings.HasPrefix(word, `@"`) {
		return "", false
	}
	return word[1:], true
}

// mentionItems are the paths the popup offers; nil when it is closed.
func (m *Model) mentionItems() []string {
	if m.picker != nil || m.approval != nil || m.undo != nil || m.at.idx == nil {
		return nil
	}
	q, ok := m.mentionWord()
	if !ok || m.composer.Value() == m.at.closedAt {
		return nil
	}
	if q == m.at.cacheQ && m.at.idx.Len() == m.at.cacheN && m.at.cache != nil {
		return m.at.cache
	}
	found := m.at.idx.Find(q, mentionRows+1)
	// A completed directory is not offered again: what is below it is.
	if strings.HasSuffix(q, "/") {
		found = slices.DeleteFunc(found, func(p string) bool { return p == q })
	}
	if len(found) > mentionRows {
		found = found[:mentionRows]
	}
	m.at.cacheQ, m.at.cacheN, m.at.cache = q, m.at.idx.Len(), found
	return found
}

// mentionOpen says the popup is shown (with paths, or while the walk has
// found none yet).
func (m *Model) mentionOpen() bool {
	if len(m.mentionItems()) > 0 {
		return true
	}
	_, ok := m.mentionWord()
	return ok && m.at.walking && m.at.idx != nil && m.at.idx.Len() == 0 && m.composer.Value() != m.at.closedAt
}

// mentionKey handles a key while the popup offers paths; false leaves
// the key to the composer.
func (m *Model) mentionKey(k tea.KeyPressMsg, items []string) bool {
	sel := min(m.at.sel, len(items)-1)
	switch k.String() {
	case "up":
		m.at.sel = (sel + len(items) - 1) % len(items)
		return true
	case "down":
		m.at.sel = (sel + 1) % len(items)
		return true
	case "tab", "enter":
		m.completeMention(items[sel])
		return true
	case "esc":
		m.at.closedAt = m.composer.Value()
		return true
	}
	m.at.sel = 0
	return false
}

// completeMention replaces the fragment after the `@` with p: a file is
// followed by a space (the mention is done), a directory is not (go on
// typing to complete below it). A path with a space is quoted.
func (m *Model) completeMention(p string) {
	text := m.composer.Value()
	start := strings.LastIndexAny(text, " \n") + 1
	word := p
	if strings.ContainsAny(p, " \t") {
		word = `"` + p + `"`
	}
	if !strings.HasSuffix(p, "/") {
		word += " "
	}
	m.composer.SetValue(text[:start] + "@" + word)
	m.at.sel = 0
	m.layout()
}

// mentionWalk starts the walk of the session's workspace when the user
// begins a mention and none is known; nil otherwise.
func (m *Model) mentionWalk() tea.Cmd {
	if _, ok := m.mentionWord(); !ok {
		return nil
	}
	ws := m.session.Cwd
	if ws == "" || (m.at.ws == ws && m.at.idx != nil && (!m.at.stale || m.at.walking)) {
		return nil
	}
	// A walk still going for another workspace is not closed here: its
	// command may be running it. Its batch comes back with an old gen
	// and is closed then (mentionBatch).
	m.at = atState{ws: ws, idx: &mention.Index{}, gen: m.at.gen + 1}
	w, err := mention.NewWalker(ws, mention.WalkOptions{})
	if err != nil {
		return nil // an unreadable workspace completes nothing
	}
	m.at.walker, m.at.walking = w, true
	return walkCmd(m.at.gen, w)
}

// walkCmd collects one batch of w in a command (off the UI goroutine);
// only one runs at a time for a walker, so it needs no lock.
func walkCmd(gen int, w *mention.Walker) tea.Cmd {
	return func() tea.Msg {
		paths, _ := w.Next(context.Background(), mentionBatch)
		return mentionBatchMsg{w: w, gen: gen, paths: paths, done: w.Done(), limited: w.Limited()}
	}
}

// mentionBatch adds a batch to the index and asks for the next one.
func (m *Model) mentionBatch(msg mentionBatchMsg) tea.Cmd {
	if msg.gen != m.at.gen || msg.w != m.at.walker {
		msg.w.Close() // an abandoned walk ends with its last batch
		return nil
	}
	m.at.idx.Add(msg.paths)
	if !msg.done {
		return walkCmd(m.at.gen, m.at.walker)
	}
	m.at.walker.Close()
	m.at.walker, m.at.walking, m.at.limited = nil, false, msg.limited
	return nil
}

// mentionLines renders the popup above the composer.
func (m *Model) mentionPopupLines() []string {
	if !m.mentionOpen() {
		return nil
	}
	st := m.render.styles
	items := m.mentionItems()
	if len(items) == 0 {
		return []string{st.dim.Render(ansi.Truncate("  searching the workspace…", m.width, "…"))}
	}
	sel := min(m.at.sel, len(items)-1)
	var out []string
	for i, p := range items {
		// A repository's file names are not trusted: shown, never acted on.
		line := "  @" + termtext.Line(p)
		if i == sel {
			line = st.accent.Render("▸" + ansi.Truncate(line[1:], m.width-1, "…"))
		} else {
			line = st.dim.Render(ansi.Truncate(line, m.width, "…"))
		}
		out = append(out, line)
	}
	hint := "  ↑/↓ select · tab/enter complete · esc close"
	switch {
	case m.at.walking:
		hint += " · " + strconv.Itoa(m.at.idx.Len()) + " paths so far"
	case m.at.limited:
		hint += " · only the first " + strconv.Itoa(m.at.idx.Len()) + " paths are searched"
	}
	return append(out, st.dim.Render(ansi.Truncate(hint, m.width, "…")))
}

// mentionOverlay is the @-completion popup on the overlay stack: the
// arrows select a path, Tab and Enter complete it, Esc closes the popup.
type mentionOverlay struct{}

func (mentionOverlay) update(m *Model, k tea.KeyPressMsg) (bool, tea.Cmd) {
	if m.browsingHistory(k) {
		return false, nil
	}
	if items := m.mentionItems(); len(items) > 0 {
		if !m.mentionKey(k, items) {
			return false, nil
		}
		m.layout()
		return true, nil
	}
	if k.String() == "esc" {
		m.at.closedAt = m.composer.Value()
		return true, nil
	}
	return false, nil
}

func (mentionOverlay) view(m *Model) []string { return m.mentionPopupLines() }
