package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// piece is a part of a line: text of one styling and its width in cells.
type piece struct {
	text string
	a    attr
	w    int
}

// layout breaks spans into lines of at most width cells at spaces (a run
// of spaces is one break opportunity and disappears at a line end), words
// longer than a line are broken where they reach its end, and "\n" spans
// end a line. Each line is styled piece by piece, so no styling crosses a
// line end.
func (m *markdown) layout(spans []mdSpan, width int) []string {
	b := &breaker{width: max(width, 1)}
	for _, s := range spans {
		b.read(s)
	}
	b.flush()
	if len(b.cur) > 0 || len(b.lines) == 0 {
		b.endLine()
	}
	out := make([]string, len(b.lines))
	for i, l := range b.lines {
		out[i] = m.line(l)
	}
	return out
}

// breaker is layout's state: the lines done, the line being filled (cur,
// curW cells) and the word being read (word, wordW cells), and whether a
// space (of spaceAttr's styling) comes before that word.
type breaker struct {
	width       int
	lines       [][]piece
	cur, word   []piece
	curW, wordW int
	space       bool
	spaceAttr   attr
}

// read takes one span: its words, spaces and line ends.
func (b *breaker) read(s mdSpan) {
	t := s.text
	for t != "" {
		i := strings.IndexAny(t, " \n")
		if i < 0 {
			i = len(t)
		}
		if i > 0 {
			w := ansi.StringWidth(t[:i])
			b.word = append(b.word, piece{t[:i], s.a, w})
			b.wordW += w
		}
		if i == len(t) {
			return
		}
		if t[i] == '\n' {
			b.flush()
			b.endLine()
		} else {
			hadWord := b.wordW > 0
			b.flush()
			if hadWord || len(b.cur) > 0 {
				b.space, b.spaceAttr = true, s.a
			}
		}
		t = t[i+1:]
	}
}

func (b *breaker) endLine() {
	b.lines = append(b.lines, b.cur)
	b.cur, b.curW = nil, 0
}

// flush puts the word read on the line, after its space, or on the next
// line when it does not fit.
func (b *breaker) flush() {
	if b.wordW > 0 {
		if b.space && len(b.cur) > 0 {
			if b.curW+1+b.wordW > b.width {
				b.endLine()
			} else {
				b.cur = append(b.cur, piece{" ", b.spaceAttr, 1})
				b.curW++
			}
		}
		for _, p := range b.word {
			b.place(p)
		}
	}
	b.word, b.wordW, b.space = nil, 0, false
}

// place puts a piece of a word on the line, breaking it where it reaches
// the line's end (a word longer than a line).
func (b *breaker) place(p piece) {
	for b.curW+p.w > b.width {
		head := ansi.Truncate(p.text, b.width-b.curW, "")
		if head == "" {
			if len(b.cur) > 0 {
				b.endLine()
				continue
			}
			_, size := firstRune(p.text)
			head = p.text[:size]
		}
		hw := ansi.StringWidth(head)
		b.cur = append(b.cur, piece{head, p.a, hw})
		p.text, p.w = p.text[len(head):], p.w-hw
		b.endLine()
	}
	if p.w > 0 {
		b.cur = append(b.cur, p)
		b.curW += p.w
	}
}

// line renders pieces, merging neighbours of the same styling.
func (m *markdown) line(ps []piece) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i + 1
		var run strings.Builder
		run.WriteString(ps[i].text)
		for j < len(ps) && ps[j].a == ps[i].a {
			run.WriteString(ps[j].text)
			j++
		}
		b.WriteString(m.styled(run.String(), ps[i].a))
		i = j
	}
	return b.String()
}

func firstRune(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	return r, max(size, 1)
}

// Column alignments of a table.
const (
	alignLeft = iota
	alignCenter
	alignRight
)

// mdTable is a GitHub table found in a paragraph: the paragraph lines
// before it, then the raw cells of the header and body rows.
type mdTable struct {
	lead  string
	rows  [][]string
	align []int
}

// findTable recognises a table in a paragraph: a header row, a delimiter
// row with as many cells (---, :--, --:, :-:) and body rows; lines before
// the header stay a paragraph.
func findTable(n ast.Node, src []byte) (mdTable, bool) {
	lines := rawLines(n, src)
	for i := 1; i < len(lines); i++ {
		align, ok := delimiterRow(lines[i])
		if !ok {
			continue
		}
		head := splitRow(lines[i-1])
		if len(head) != len(align) {
			continue
		}
		t := mdTable{lead: strings.Join(lines[:i-1], "\n"), align: align, rows: [][]string{head}}
		for _, l := range lines[i+1:] {
			t.rows = append(t.rows, splitRow(l))
		}
		return t, true
	}
	return mdTable{}, false
}

func delimiterRow(l string) ([]int, bool) {
	if !strings.Contains(l, "-") {
		return nil, false
	}
	cells := splitRow(l)
	if len(cells) == 1 && !strings.Contains(l, "|") {
		return nil, false // a lone "---" is a heading underline or a rule
	}
	align := make([]int, len(cells))
	for i, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.Trim(c, ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil, false
		}
		switch {
		case left && right:
			align[i] = alignCenter
		case right:
			align[i] = alignRight
		}
	}
	return align, true
}

// splitRow splits a table row at pipes that are not escaped, without the
// optional outer pipes; cells are trimmed and `\|` becomes `|`.
func splitRow(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(l, "|")
	if strings.HasSuffix(l, "|") && !strings.HasSuffix(l, `\|`) {
		l = l[:len(l)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l) && l[i+1] == '|':
			cell.WriteByte('|')
			i++
		case l[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(l[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// cell parses one cell's Markdown as inline content.
func (m *markdown) cell(s string, a attr) []mdSpan {
	if s == "" {
		return nil
	}
	b := []byte(s)
	doc := m.p.Parse(text.NewReader(b))
	if p, ok := doc.FirstChild().(*ast.Paragraph); ok && p.NextSibling() == nil {
		return m.inline(p, b, a, nil)
	}
	return []mdSpan{{s, a}} // e.g. "1." or "# x": not a paragraph on its own
}

// table renders t with columns separated by " │ " and a rule under the
// header. When the natural widths do not fit, wide columns are narrowed
// and their cells wrapped.
func (m *markdown) table(t mdTable, width int) []string {
	var out []string
	if t.lead != "" {
		b := []byte(t.lead)
		out = append(m.blocks(m.p.Parse(text.NewReader(b)), b, width, false), "")
	}
	ncol := len(t.align)
	cells := make([][][]mdSpan, len(t.rows))
	natural := make([]int, ncol)
	for r, row := range t.rows {
		cells[r] = make([][]mdSpan, ncol)
		for c := range ncol {
			a := attr(0)
			if r == 0 {
				a = aBold
			}
			if c < len(row) {
				cells[r][c] = m.cell(row[c], a)
			}
			natural[c] = max(natural[c], spansWidth(cells[r][c]))
		}
	}
	avail := width - 3*(ncol-1)
	if avail < 2*ncol {
		// Too narrow for columns: one "cell │ cell" paragraph per row.
		for _, row := range cells {
			var spans []mdSpan
			for c, cs := range row {
				if c > 0 {
					spans = append(spans, mdSpan{" │ ", aDim})
				}
				spans = append(spans, cs...)
			}
			out = append(out, m.layout(spans, width)...)
		}
		return out
	}
	widths := fitColumns(natural, avail)
	sep := m.styled(" │", aDim) + " " // the space unstyled, so an empty last cell trims away
	for r, row := range cells {
		wrapped := make([][]string, ncol)
		height := 1
		for c := range ncol {
			wrapped[c] = m.layout(row[c], widths[c])
			height = max(height, len(wrapped[c]))
		}
		for i := range height {
			var b strings.Builder
			for c := range ncol {
				if c > 0 {
					b.WriteString(sep)
				}
				s := ""
				if i < len(wrapped[c]) {
					s = wrapped[c][i]
				}
				b.WriteString(pad(s, widths[c], t.align[c]))
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
		if r == 0 {
			rule := make([]string, ncol)
			for c, w := range widths {
				rule[c] = strings.Repeat("─", w)
			}
			out = append(out, m.styled(strings.Join(rule, "─┼─"), aDim))
		}
	}
	return out
}

func spansWidth(spans []mdSpan) int {
	w := 0
	for _, s := range spans {
		w += ansi.StringWidth(s.text)
	}
	return w
}

// fitColumns shares avail cells among columns of the given natural widths:
// columns narrower than an even share keep their width, the others split
// what is left.
func fitColumns(natural []int, avail int) []int {
	widths := make([]int, len(natural))
	total := 0
	for i, n := range natural {
		widths[i] = max(n, 1)
		total += widths[i]
	}
	if total <= avail {
		return widths
	}
	fixed := make([]bool, len(natural))
	left, open := avail, len(natural)
	for changed := true; changed; {
		changed = false
		share := left / max(open, 1)
		for i, n := range widths {
			if !fixed[i] && n <= share {
				fixed[i], changed = true, true
				left -= n
				open--
			}
		}
	}
	share, extra := left/max(open, 1), left%max(open, 1)
	for i := range widths {
		if fixed[i] {
			continue
		}
		widths[i] = max(share, 1)
		if extra > 0 {
			widths[i]++
			extra--
		}
	}
	return widths
}

// pad fills s to width cells as the column's alignment says.
func pad(s string, width, align int) string {
	gap := width - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	switch align {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}
