package tui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// composer is the multi-line prompt editor. (bubbles/textarea would pull
// in a clipboard module this build does not have; editing a prompt needs
// little more than this.)
type composer struct {
	lines    [][]rune
	row, col int
	width    int
	height   int // visual lines shown
	prompt   string
	holder   string
	cursor   lipgloss.Style
	dim      lipgloss.Style
}

func newComposer() composer {
	return composer{
		lines:  [][]rune{nil},
		prompt: "> ",
		holder: "Ask SCV… (Enter send · Ctrl+J newline · /help)",
		cursor: lipgloss.NewStyle().Reverse(true),
		dim:    lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		height: 1,
	}
}

func (c *composer) Value() string {
	parts := make([]string, len(c.lines))
	for i, l := range c.lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "\n")
}

func (c *composer) SetValue(s string) {
	c.lines = nil
	for _, l := range strings.Split(s, "\n") {
		c.lines = append(c.lines, []rune(l))
	}
	c.row = len(c.lines) - 1
	c.col = len(c.lines[c.row])
}

func (c *composer) Reset()         { c.SetValue("") }
func (c *composer) Line() int      { return c.row }
func (c *composer) LineCount() int { return len(c.lines) }

func (c *composer) insert(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	for _, r := range s {
		switch {
		case r == '\n':
			c.newline()
		case r == '\t':
			c.insertRune(' ')
		case unicode.IsPrint(r):
			c.insertRune(r)
		}
	}
}

func (c *composer) insertRune(r rune) {
	l := c.lines[c.row]
	l = append(l[:c.col], append([]rune{r}, l[c.col:]...)...)
	c.lines[c.row] = l
	c.col++
}

func (c *composer) newline() {
	l := c.lines[c.row]
	rest := append([]rune(nil), l[c.col:]...)
	c.lines[c.row] = l[:c.col]
	c.lines = append(c.lines[:c.row+1], append([][]rune{rest}, c.lines[c.row+1:]...)...)
	c.row, c.col = c.row+1, 0
}

func (c *composer) backspace() {
	switch {
	case c.col > 0:
		l := c.lines[c.row]
		c.lines[c.row] = append(l[:c.col-1], l[c.col:]...)
		c.col--
	case c.row > 0:
		prev := c.lines[c.row-1]
		c.col = len(prev)
		c.lines[c.row-1] = append(prev, c.lines[c.row]...)
		c.lines = append(c.lines[:c.row], c.lines[c.row+1:]...)
		c.row--
	}
}

func (c *composer) deleteForward() {
	l := c.lines[c.row]
	switch {
	case c.col < len(l):
		c.lines[c.row] = append(l[:c.col], l[c.col+1:]...)
	case c.row < len(c.lines)-1:
		c.lines[c.row] = append(l, c.lines[c.row+1]...)
		c.lines = append(c.lines[:c.row+1], c.lines[c.row+2:]...)
	}
}

func (c *composer) deleteWord() {
	l := c.lines[c.row]
	i := c.col
	for i > 0 && l[i-1] == ' ' {
		i--
	}
	for i > 0 && l[i-1] != ' ' {
		i--
	}
	c.lines[c.row] = append(l[:i], l[c.col:]...)
	c.col = i
}

// Update handles editing keys and paste; other messages are ignored.
func (c *composer) Update(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		c.insert(msg.Content)
	case tea.KeyPressMsg:
		c.key(msg)
	}
}

func (c *composer) key(k tea.KeyPressMsg) {
	switch k.String() {
	case "ctrl+j", "shift+enter", "alt+enter":
		c.newline()
	case "backspace", "ctrl+h":
		c.backspace()
	case "delete", "ctrl+d":
		c.deleteForward()
	case "left", "ctrl+b":
		if c.col > 0 {
			c.col--
		} else if c.row > 0 {
			c.row--
			c.col = len(c.lines[c.row])
		}
	case "right", "ctrl+f":
		if c.col < len(c.lines[c.row]) {
			c.col++
		} else if c.row < len(c.lines)-1 {
			c.row, c.col = c.row+1, 0
		}
	case "up", "ctrl+p":
		if c.row > 0 {
			c.row--
			c.col = min(c.col, len(c.lines[c.row]))
		}
	case "down", "ctrl+n":
		if c.row < len(c.lines)-1 {
			c.row++
			c.col = min(c.col, len(c.lines[c.row]))
		}
	case "home", "ctrl+a":
		c.col = 0
	case "end", "ctrl+e":
		c.col = len(c.lines[c.row])
	case "ctrl+u":
		c.lines[c.row] = c.lines[c.row][c.col:]
		c.col = 0
	case "ctrl+k":
		c.lines[c.row] = c.lines[c.row][:c.col]
	case "ctrl+w", "alt+backspace":
		c.deleteWord()
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			c.insert(k.Text)
		}
	}
}

// visual wraps the lines at the text width (in cells, so wide runes
// count twice) and reports where the cursor lands: visual row and rune
// index in it.
func (c *composer) visual() (rows []string, curRow, curCol int) {
	w := max(c.width-ansi.StringWidth(c.prompt)-1, 4)
	for i, l := range c.lines {
		bounds := wrapRunes(l, w)
		if i == c.row && c.col == len(l) && len(l) > 0 && bounds[len(bounds)-1].full {
			bounds = append(bounds, span{a: len(l), b: len(l)}) // the cursor after a full row gets its own
		}
		for k, sp := range bounds {
			if i == c.row && c.col >= sp.a && (c.col < sp.b || (c.col == sp.b && k == len(bounds)-1)) {
				curRow, curCol = len(rows), c.col-sp.a
			}
			rows = append(rows, string(l[sp.a:sp.b]))
		}
	}
	return rows, curRow, curCol
}

// span is one visual row of a line: runes [a, b); full when it filled the
// width.
type span struct {
	a, b int
	full bool
}

func wrapRunes(l []rune, w int) []span {
	var out []span
	start, cells := 0, 0
	for i, r := range l {
		rw := max(ansi.StringWidth(string(r)), 1)
		if cells+rw > w {
			out = append(out, span{a: start, b: i, full: true})
			start, cells = i, 0
		}
		cells += rw
	}
	return append(out, span{a: start, b: len(l), full: cells >= w})
}

// VisualLines is how many rows the content needs.
func (c *composer) VisualLines() int {
	rows, _, _ := c.visual()
	return len(rows)
}

func (c *composer) SetWidth(w int)  { c.width = w }
func (c *composer) SetHeight(h int) { c.height = max(h, 1) }
func (c *composer) Height() int     { return c.height }

// View renders height rows around the cursor, the cursor as a reversed
// cell.
func (c *composer) View() string {
	rows, cr, cc := c.visual()
	pad := strings.Repeat(" ", ansi.StringWidth(c.prompt))
	if len(rows) == 1 && rows[0] == "" {
		return c.prompt + c.cursor.Render(" ") + c.dim.Render(ansi.Truncate(c.holder, max(c.width-len(c.prompt)-1, 0), "…"))
	}
	first := max(0, min(cr-c.height+1, len(rows)-c.height))
	var b strings.Builder
	for i := first; i < first+c.height && i < len(rows); i++ {
		if i > first {
			b.WriteByte('\n')
		}
		if i == 0 {
			b.WriteString(c.prompt)
		} else {
			b.WriteString(pad)
		}
		r := rows[i]
		if i != cr {
			b.WriteString(r)
			continue
		}
		rr := []rune(r)
		col := min(cc, len(rr))
		under := " "
		if col < len(rr) {
			under = string(rr[col])
		}
		b.WriteString(string(rr[:col]) + c.cursor.Render(under))
		if col < len(rr) {
			b.WriteString(string(rr[col+1:]))
		}
	}
	return b.String()
}
