package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// Bounds that keep memory and frame time flat in long sessions.
const (
	// DefaultMaxItems is how many transcript items are kept; older ones are
	// evicted (in chunks of a tenth) behind a visible marker.
	DefaultMaxItems = 2000
	// PreviewLines is how many output lines a collapsed tool row shows.
	PreviewLines = 6
	// ExpandedLines bounds the output of the row expanded with Ctrl+O.
	ExpandedLines = 400
	// maxStoredOutput bounds the output kept per tool row.
	maxStoredOutput = 256 << 10
)

type itemKind int

const (
	kindUser itemKind = iota
	kindAssistant
	kindTool
	kindNotice
	kindError
	kindReasoning
)

// toolState is the lifecycle of a tool row (docs/tui.md).
type toolState int

const (
	toolPending toolState = iota
	toolAwaiting
	toolRunning
	toolDone
	toolDenied
	toolFailed
	toolCancelled
)

func (s toolState) String() string {
	return [...]string{"pending", "awaiting approval", "running", "done", "denied", "failed", "cancelled"}[s]
}

func (s toolState) finished() bool { return s >= toolDone }

// item is one transcript entry plus its render cache.
type item struct {
	kind      itemKind
	text      string // prompt, assistant text, notice or error
	streaming bool   // assistant text still arriving
	collapsed bool   // reasoning folded to one line (the turn ended)

	callID, name, args string
	// asked says an approval was requested for the call; summary is the
	// call's whole summary from tool.started, shown when it was not asked
	// (the approval panel showed it otherwise).
	asked     bool
	summary   string
	state     toolState
	progress  string
	output    string
	truncated bool
	errKind   string
	notes     []string // from the result shape: exit status, …
	// diff is a write's planned change (from its approval, or from
	// tool.started when no one was asked); granted says a session grant
	// let the call run without asking.
	diff    *proto.Diff
	granted bool
	// mentions are a prompt's `@` mentions from turn.started: shown as
	// chips under it, never their content.
	mentions []proto.Mention
	// rule is the saved rule that allowed the call, in words ("" when
	// none did).
	rule string

	// render cache: lines at width and view, valid while !dirty.
	dirty bool
	width int
	view  toolView
	lines []string
}

// toolView is how a tool row is drawn besides its own state: expanded,
// the row Ctrl+O acts on (target), the row selected with Alt+Up/Down.
type toolView struct{ expanded, target, selected bool }

func (it *item) touch() { it.dirty = true }

// transcript is the bounded list of items shown.
type transcript struct {
	max     int
	items   []*item
	evicted int
	tools   map[string]*item // by call_id, for rows still in items
	// sel is the row selected with Alt+Up/Down (nil: none; Ctrl+O then
	// acts on the latest row it can expand).
	sel *item
}

func newTranscript(max int) *transcript {
	if max <= 0 {
		max = DefaultMaxItems
	}
	return &transcript{max: max, tools: map[string]*item{}}
}

func (t *transcript) add(it *item) *item {
	it.dirty = true
	t.items = append(t.items, it)
	if it.kind == kindTool && it.callID != "" {
		t.tools[it.callID] = it
	}
	if len(t.items) > t.max {
		t.evict(max(1, t.max/10))
	}
	return it
}

// evict drops the n oldest items, copying the rest so the dropped ones can
// be collected.
func (t *transcript) evict(n int) {
	for _, it := range t.items[:n] {
		if it.kind == kindTool {
			delete(t.tools, it.callID)
		}
		if it == t.sel {
			t.sel = nil
		}
	}
	rest := make([]*item, len(t.items)-n, t.max+1)
	copy(rest, t.items[n:])
	t.items = rest
	t.evicted += n
}

func (t *transcript) reset() {
	t.items = nil
	t.evicted = 0
	t.tools = map[string]*item{}
	t.sel = nil
}

func (t *transcript) last() *item {
	if len(t.items) == 0 {
		return nil
	}
	return t.items[len(t.items)-1]
}

// expandable says Ctrl+O changes the row: a tool row with output or a
// diff.
func (it *item) expandable() bool {
	return it.kind == kindTool && (it.output != "" || it.diff != nil && it.diff.Text != "")
}

// selectable says Alt+Up/Down stop at the item: a row Ctrl+O expands,
// or a finished answer (y copies it).
func (it *item) selectable() bool {
	return it.expandable() || it.kind == kindAssistant && !it.streaming && strings.TrimSpace(it.text) != ""
}

// copyText is what y copies of a selected item: an answer's Markdown, a
// write's diff, another tool row's output.
func (it *item) copyText() string {
	switch {
	case it.kind == kindAssistant:
		return it.text
	case it.diff != nil && it.diff.Text != "":
		return it.diff.Text
	}
	return it.output
}

// latestOutput is the newest row Ctrl+O can expand.
func (t *transcript) latestOutput() *item {
	for i := len(t.items) - 1; i >= 0; i-- {
		if it := t.items[i]; it.expandable() {
			return it
		}
	}
	return nil
}

// target is the row Ctrl+O acts on: the selected one, else the latest;
// nil when that cannot be expanded (a selected answer).
func (t *transcript) target() *item {
	if t.sel != nil {
		if !t.sel.expandable() {
			return nil
		}
		return t.sel
	}
	return t.latestOutput()
}

// selectStep moves the selection to the selectable item before (d < 0)
// or after (d > 0) it. The first step up selects the latest such item; a
// step down past the last one ends the selection. It reports whether
// anything changed.
func (t *transcript) selectStep(d int) bool {
	if t.sel == nil {
		if d > 0 {
			return false
		}
		for i := len(t.items) - 1; i >= 0; i-- {
			if t.items[i].selectable() {
				t.sel = t.items[i]
				return true
			}
		}
		return false
	}
	i := slices.Index(t.items, t.sel)
	for i += d; i >= 0 && i < len(t.items); i += d {
		if t.items[i].selectable() {
			t.sel = t.items[i]
			return true
		}
	}
	if d > 0 {
		t.sel = nil
		return true
	}
	return false
}

// argSummary turns tool arguments into one short line: the most telling
// string field when there is one, else compact JSON.
func argSummary(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"command", "path", "url", "query", "prompt", "name", "pattern"} {
			if s, ok := obj[k].(string); ok && s != "" {
				return oneLine(s)
			}
		}
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return oneLine(string(b))
		}
	}
	return oneLine(string(raw))
}

// oneLine folds whitespace, makes control characters visible and bounds
// the result for a one-line row (the approval panel shows the whole text).
func oneLine(s string) string {
	s = termtext.Line(strings.Join(strings.Fields(s), " "))
	if len(s) > 512 {
		s = strings.ToValidUTF8(s[:512], "")
	}
	return s
}

// boundOutput keeps at most maxStoredOutput bytes of a tool's output.
func boundOutput(s string) (string, bool) {
	if len(s) <= maxStoredOutput {
		return s, false
	}
	return strings.ToValidUTF8(s[:maxStoredOutput], ""), true
}

// render returns the item's lines at width, from cache when possible.
func (it *item) render(width int, r *renderer) []string {
	var v toolView
	switch it.kind {
	case kindTool:
		v = toolView{expanded: r.expanded == it, target: r.target == it, selected: r.selected == it}
	case kindAssistant:
		v = toolView{selected: r.selected == it}
	}
	if !it.dirty && it.width == width && it.view == v && it.lines != nil {
		return it.lines
	}
	var lines []string
	switch it.kind {
	case kindUser:
		lines = prefixed(r.styles.user.Render("› "), "  ", it.text, width)
		lines = append(lines, mentionLines(it.mentions, width, r)...)
	case kindAssistant:
		lines = r.assistant(it, width)
		if v.selected && len(lines) > 0 {
			// The answer's lines are cached by the renderer: mark a copy.
			lines = append([]string{r.styles.accent.Render("▸ ") + ansi.TruncateLeft(lines[0], 2, "")}, lines[1:]...)
		}
	case kindTool:
		lines = renderTool(it, width, v, r)
	case kindNotice:
		lines = prefixed(r.styles.dim.Render("· "), "  ", it.text, width)
		for i := range lines {
			lines[i] = r.styles.dim.Render(lines[i])
		}
	case kindError:
		lines = prefixed(r.styles.err.Render("✗ "), "  ", it.text, width)
	case kindReasoning:
		lines = renderReasoning(it, width, r)
	}
	it.lines, it.width, it.view, it.dirty = lines, width, v, false
	return lines
}

// prefixed wraps text to width with first on the first line and rest on
// the others.
func prefixed(first, rest, text string, width int) []string {
	w := max(width-ansi.StringWidth(rest), 8)
	wrapped := strings.Split(ansi.Wrap(strings.TrimRight(text, "\n"), w, ""), "\n")
	out := make([]string, len(wrapped))
	for i, l := range wrapped {
		if i == 0 {
			out[i] = first + l
		} else {
			out[i] = rest + l
		}
	}
	return out
}

// ctrlOHint says what Ctrl+O does to a row: at once for the row it acts on,
// after selecting it for any other.
func ctrlOHint(v toolView, verb string) string {
	if v.target {
		return "ctrl+o to " + verb
	}
	return "select with alt+↑/↓, then ctrl+o to " + verb
}

// renderTool is a tool call's row: its head, summary, diff, progress
// and output.
func renderTool(it *item, width int, v toolView, r *renderer) []string {
	st := r.styles
	lines := append([]string{toolHead(it, width, v, st)}, toolSummary(it, width, st)...)
	if it.diff != nil {
		lines = append(lines, diffRows(it.diff, width, v, st)...)
	}
	if it.state == toolRunning && it.progress != "" {
		lines = append(lines, st.dim.Render("  │ "+ansi.Truncate(strings.ReplaceAll(it.progress, "\t", " "), max(width-4, 8), "…")))
	}
	return append(lines, toolOutput(it, width, v, st)...)
}

// toolMark is the mark of a call's state and the style of its mark and
// tag.
func toolMark(state toolState, st styles) (string, lipgloss.Style) {
	switch state {
	case toolAwaiting:
		return "?", st.warn
	case toolRunning:
		return "◐", st.accent
	case toolDone:
		return "●", st.ok
	case toolDenied, toolFailed:
		return "✗", st.err
	case toolCancelled:
		return "■", st.warn
	}
	return "○", st.dim
}

// toolHead is a call's first line: the selection mark, the state's mark,
// the tool's name, its arguments cut to the width and the state's tag.
func toolHead(it *item, width int, v toolView, st styles) string {
	mark, stateStyle := toolMark(it.state, st)
	state := it.state.String()
	if it.state == toolFailed && it.errKind != "" && it.errKind != "failed" {
		state = "failed: " + it.errKind
	}
	tag := " [" + state + "]"
	sel := ""
	if v.selected {
		sel = st.accent.Render("▸ ")
	}
	head := mark + " " + it.name
	room := width - ansi.StringWidth(head) - ansi.StringWidth(tag) - ansi.StringWidth(sel) - 1
	if it.args != "" && room > 4 {
		head += " " + ansi.Truncate(it.args, room, "…")
	}
	return sel + stateStyle.Render(mark) + " " + st.bold.Render(it.name) + strings.TrimPrefix(head, mark+" "+it.name) + stateStyle.Render(tag)
}

// toolSummary is the call's summary, wrapped (at most ExpandedLines
// lines), then the saved rule or session grant that let it run.
func toolSummary(it *item, width int, st styles) []string {
	var lines []string
	if it.summary != "" {
		// Wrapped, never cut on the row: a URL's query is where data
		// would leave.
		sum := strings.Split(ansi.Wrap(strings.ReplaceAll(it.summary, "\t", "    "), max(width-4, 8), ""), "\n")
		n := len(sum)
		sum = sum[:min(n, ExpandedLines)]
		for i, l := range sum {
			pre := "    "
			if i == 0 {
				pre = "  ↳ "
			}
			lines = append(lines, st.dim.Render(pre)+l)
		}
		if n > len(sum) {
			lines = append(lines, st.dim.Render(fmt.Sprintf("    … %d more lines of the call's summary", n-len(sum))))
		}
	}
	switch {
	case it.rule != "":
		for i, l := range strings.Split(ansi.Wrap("✓ allowed by the saved rule "+it.rule, max(width-4, 8), ""), "\n") {
			pre := "  "
			if i > 0 {
				pre = "    "
			}
			lines = append(lines, st.dim.Render(pre+l))
		}
	case it.granted:
		lines = append(lines, st.dim.Render("  ✓ allowed by a session grant (/approvals lists them)"))
	}
	return lines
}

// toolOutput is the call's output: PreviewLines lines (ExpandedLines
// expanded), each cut to the width, then what more there is (lines not
// shown, the call's notes, the tool's truncation) on one line.
func toolOutput(it *item, width int, v toolView, st styles) []string {
	if it.output == "" {
		if len(it.notes) > 0 {
			return []string{st.dim.Render("  ⎿ " + ansi.Truncate(strings.Join(it.notes, " · "), max(width-4, 8), "…"))}
		}
		return nil
	}
	expanded := v.expanded
	out := strings.Split(strings.TrimRight(it.output, "\n"), "\n")
	limit := PreviewLines
	if expanded {
		limit = ExpandedLines
	}
	shown := out[:min(len(out), limit)]
	var lines []string
	for i, l := range shown {
		pre := "    "
		if i == 0 {
			pre = "  ⎿ "
		}
		lines = append(lines, st.dim.Render(pre)+ansi.Truncate(strings.ReplaceAll(l, "\t", "    "), max(width-4, 8), "…"))
	}
	var more []string
	if n := len(out) - len(shown); n > 0 {
		hint := ctrlOHint(v, "expand")
		if expanded {
			hint = ctrlOHint(v, "collapse")
		}
		more = append(more, fmt.Sprintf("… %d more lines (%s)", n, hint))
	} else if expanded {
		more = append(more, "("+ctrlOHint(v, "collapse")+")")
	}
	more = append(more, it.notes...)
	if it.truncated {
		more = append(more, "output truncated by the tool")
	}
	if len(more) > 0 {
		lines = append(lines, st.dim.Render("    "+ansi.Truncate(strings.Join(more, " · "), max(width-4, 8), "…")))
	}
	return lines
}

// diffRows is a write's change on its row: the stat, and with Ctrl+O the
// diff itself, coloured, at most ExpandedLines lines, each cut to the
// width.
func diffRows(d *proto.Diff, width int, v toolView, st styles) []string {
	expanded := v.expanded
	stat := "  ± " + diffStat(d)
	lines := diffLines(d.Text)
	switch {
	case d.Note != "":
		stat += " · " + oneLine(d.Note)
	case len(lines) > 0 && !expanded:
		stat += " · " + ctrlOHint(v, "show the diff")
	}
	out := []string{st.dim.Render(ansi.Truncate(stat, max(width, 8), "…"))}
	if !expanded || len(lines) == 0 {
		return out
	}
	shown := lines[:min(len(lines), ExpandedLines)]
	for _, l := range shown {
		out = append(out, "    "+diffStyle(st, l).Render(ansi.Truncate(strings.ReplaceAll(l, "\t", "    "), max(width-4, 8), "…")))
	}
	if more := len(lines) - len(shown) + d.Omitted; more > 0 {
		out = append(out, st.dim.Render(fmt.Sprintf("    … +%d more lines of the diff (%s)", more, ctrlOHint(v, "collapse"))))
	}
	return out
}
