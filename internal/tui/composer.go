package tui

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	bkey "charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// maxComposerRows is the most text lines the composer holds (the limit of
// bubbles/textarea); a paste that would pass it is refused whole.
const maxComposerRows = 10000

// textMods are the modifiers a key that types text may carry: Shift, and
// the lock keys some terminals report (the kitty keyboard protocol).
const textMods = tea.ModShift | tea.ModCapsLock | tea.ModNumLock | tea.ModScrollLock

// composer is the multi-line prompt editor: bubbles/textarea with SCV's
// keys, look and input rules. Enter, Esc, Ctrl+C, PageUp/PageDown and the
// prompt-history Up/Down are the model's; everything else that edits is
// the textarea's, behind our own filtering of what may be inserted.
type composer struct {
	ta      textarea.Model
	width   int
	maxRows int
	view    string // the last View, until the text, cursor or size change
	prompt  string
	holder  string
	cursor  lipgloss.Style
	dim     lipgloss.Style
}

func newComposer() composer {
	c := composer{
		prompt: "> ",
		holder: "Ask SCV… (Enter send · Ctrl+J newline · /help)",
		cursor: lipgloss.NewStyle().Reverse(true),
		dim:    lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
	}
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.EndOfBufferCharacter = ' '
	ta.CharLimit = 0
	ta.MaxWidth = 0
	// The model sizes the composer to its content (layout), so the
	// textarea never refuses input for want of rows: MaxHeight 0 is no
	// limit on lines, MaxContentHeight 0 then checks nothing.
	ta.MaxHeight = 0
	ta.DynamicHeight = true
	// The prompt is drawn by View: textarea would render it on every row of
	// the text, visible or not, on every update.
	ta.Prompt = ""
	plain := lipgloss.NewStyle()
	st := textarea.StyleState{Base: plain, Text: plain, LineNumber: plain, CursorLineNumber: plain,
		CursorLine: plain, EndOfBuffer: plain, Placeholder: c.dim, Prompt: plain,
		Selection: lipgloss.NewStyle().Reverse(true)}
	ta.SetStyles(textarea.Styles{Focused: st, Blurred: st,
		Cursor: textarea.CursorStyle{Shape: tea.CursorBlock, Blink: false}})
	ta.KeyMap = composerKeys()
	ta.Focus()
	c.ta = ta
	return c
}

// composerKeys is textarea's key map without the keys the model owns and
// without the system clipboard: Ctrl+V and Ctrl+Shift+C would run xclip,
// xsel or wl-paste on the machine SCV runs on (over SSH not the user's),
// from a key press; the terminal's own paste (bracketed paste) works
// everywhere.
func composerKeys() textarea.KeyMap {
	k := textarea.DefaultKeyMap()
	k.InsertNewline = bkey.NewBinding(bkey.WithKeys("ctrl+j", "shift+enter", "alt+enter"))
	off := bkey.NewBinding(bkey.WithDisabled())
	k.Paste, k.CopySelection = off, off
	k.PageUp, k.PageDown = off, off // the transcript scrolls
	return k
}

func (c *composer) Value() string { return c.ta.Value() }

func (c *composer) SetValue(s string) {
	c.view = ""
	c.ta.SetValue(clean(s))
	c.ta.MoveToEnd()
}

// SelectAll selects the whole text: typing or pasting replaces it.
func (c *composer) SelectAll() {
	c.view = ""
	c.ta.SelectAll()
}

func (c *composer) Reset() {
	c.view = ""
	c.ta.Reset()
}

// AtFirstRow and AtLastRow say the cursor is on the first or last screen
// row of the text, where Up and Down leave the text for prompt history.
func (c *composer) AtFirstRow() bool { return c.ta.Line() == 0 && c.ta.LineInfo().RowOffset == 0 }

// AtEnd says the cursor is after the last character of the text.
func (c *composer) AtEnd() bool {
	if c.ta.Line() != c.ta.LineCount()-1 {
		return false
	}
	v := c.ta.Value()
	last := v[strings.LastIndexByte(v, '\n')+1:]
	return c.ta.Column() == utf8.RuneCountInString(last)
}

func (c *composer) AtLastRow() bool {
	li := c.ta.LineInfo()
	return c.ta.Line() == c.ta.LineCount()-1 && li.RowOffset >= li.Height-1
}

// Update handles editing keys and paste; other messages are ignored. It
// reports a refusal the user should see (a paste over the line limit).
func (c *composer) Update(msg tea.Msg) (refused string) {
	c.view = ""
	switch msg := msg.(type) {
	case tea.PasteMsg:
		text := clean(msg.Content)
		if n := c.ta.LineCount() + strings.Count(text, "\n"); n > maxComposerRows {
			return "paste refused: the composer would hold " + strconv.Itoa(n) + " lines, over its limit of " + strconv.Itoa(maxComposerRows) + "; put a long text in a file and ask the agent to read it"
		}
		c.ta.DeleteSelection() // a paste replaces the selection, as typing does
		c.ta.InsertString(text)
	case tea.KeyPressMsg:
		if msg.Text != "" && msg.Mod&^textMods != 0 {
			// A modified key (Ctrl+X, Alt+X) is a command or nothing,
			// never text.
			msg.Text = ""
		}
		if msg.Text != "" {
			t := clean(msg.Text)
			if t == "" {
				return ""
			}
			msg.Text = t
		}
		c.ta, _ = c.ta.Update(msg)
	}
	return ""
}

// clean is what may be typed or pasted into a prompt: line ends become
// "\n", a tab one space, and other control and invisible formatting
// characters (escape sequences, bidi overrides, zero-width characters) are
// dropped, so the prompt sent is the prompt seen.
func clean(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case unicode.IsPrint(r):
			return r
		}
		return -1
	}, s)
}

// Fit sizes the composer to the window's width and its text, at most
// maxRows rows high, the cursor's row in sight.
func (c *composer) Fit(width, maxRows int) {
	c.view = ""
	// With DynamicHeight and no MaxHeight, the textarea's height is every
	// row of its text after each change of text or width (setting the
	// width re-wraps all of it, so it is set only when the width or the
	// window changes); the window then shows at most maxRows of them.
	if width != c.width || maxRows != c.maxRows {
		c.width, c.maxRows = width, maxRows
		c.ta.SetWidth(max(width-ansi.StringWidth(c.prompt), 1))
	}
	c.ta.SetHeight(min(c.ta.Height(), maxRows))
}

func (c *composer) Height() int { return c.ta.Height() }

// View renders the visible rows, the cursor as a reversed cell; an empty
// composer shows the hint.
func (c *composer) View() string {
	if c.view != "" {
		return c.view
	}
	if c.ta.Value() == "" {
		c.view = c.prompt + c.cursor.Render(" ") + c.dim.Render(ansi.Truncate(c.holder, max(c.width-len(c.prompt)-1, 0), "…"))
		return c.view
	}
	pad := strings.Repeat(" ", ansi.StringWidth(c.prompt))
	var b strings.Builder
	for i, row := range strings.Split(c.ta.View(), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i == 0 && c.ta.ScrollYOffset() == 0 {
			b.WriteString(c.prompt)
		} else {
			b.WriteString(pad)
		}
		b.WriteString(row)
	}
	c.view = b.String()
	return c.view
}
