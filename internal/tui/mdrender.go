package tui

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders completed assistant text for the terminal: goldmark's
// CommonMark parser (its core only: the extension package compiles large
// regular expressions when the program starts, whatever the command) with
// GitHub tables recognised here, laid out in lines of a given width and
// styled with SGR sequences. Code blocks are not syntax-highlighted (see
// docs/tui.md for why).
type markdown struct {
	p      parser.Parser
	styles map[attr]string
}

// attr is the inline styling of a piece of text.
type attr uint16

const (
	aBold attr = 1 << iota
	aItalic
	aCode
	aLink
	aDim
	aH1
	aH2
	aH3
	aCodeBlock
)

func newMarkdown() *markdown {
	return &markdown{
		p: parser.NewParser(
			parser.WithBlockParsers(parser.DefaultBlockParsers()...),
			parser.WithInlineParsers(parser.DefaultInlineParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		),
		styles: map[attr]string{},
	}
}

// sgr is the escape sequence that starts the styling a, built once per
// combination. Colours are the terminal's 16 (dark and light themes choose
// them); the program's output downsamples them like any other colour.
func (m *markdown) sgr(a attr) string {
	if s, ok := m.styles[a]; ok {
		return s
	}
	var st ansi.Style
	switch {
	case a&aH1 != 0:
		st = st.ForegroundColor(ansi.BrightBlue).Bold().Underline(true)
	case a&aH2 != 0:
		st = st.ForegroundColor(ansi.BrightCyan).Bold()
	case a&aH3 != 0:
		st = st.Bold()
	}
	if a&aBold != 0 {
		st = st.Bold()
	}
	if a&aItalic != 0 {
		st = st.Italic(true)
	}
	switch {
	case a&aDim != 0:
		st = st.ForegroundColor(ansi.BrightBlack)
	case a&aLink != 0:
		st = st.ForegroundColor(ansi.BrightBlue).Underline(true)
	case a&aCode != 0:
		st = st.ForegroundColor(ansi.BrightMagenta)
	case a&aCodeBlock != 0:
		st = st.ForegroundColor(ansi.Cyan)
	}
	s := ""
	if len(st) > 0 {
		s = st.String()
	}
	m.styles[a] = s
	return s
}

// render lays src out in lines of at most width cells.
func (m *markdown) render(src string, width int) []string {
	b := []byte(src)
	doc := m.p.Parse(text.NewReader(b))
	return m.blocks(doc, b, max(width, 8), false)
}

// blocks renders the block children of n, a blank line between them unless
// tight (the items of a tight list).
func (m *markdown) blocks(n ast.Node, src []byte, width int, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := m.block(c, src, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (m *markdown) block(n ast.Node, src []byte, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		if t, ok := findTable(n, src); ok {
			return m.table(t, width)
		}
		return m.layout(m.inline(n, src, 0, nil), width)
	case *ast.Heading:
		a := aH3
		switch n.Level {
		case 1:
			a = aH1
		case 2:
			a = aH2
		}
		spans := []mdSpan{{strings.Repeat("#", n.Level) + " ", aDim}}
		return m.layout(m.inline(n, src, a, spans), width)
	case *ast.ThematicBreak:
		return []string{m.styled(strings.Repeat("─", width), aDim)}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return m.code(n, src, width)
	case *ast.Blockquote:
		bar := m.styled("│", aDim)
		var out []string
		for _, l := range m.blocks(n, src, width-2, false) {
			if l == "" {
				out = append(out, bar)
			} else {
				out = append(out, bar+" "+l)
			}
		}
		return out
	case *ast.List:
		return m.list(n, src, width)
	case *ast.HTMLBlock:
		var out []string
		for _, l := range rawLines(n, src) {
			out = append(out, m.hardwrap(l, width, aDim)...)
		}
		if n.HasClosure() {
			l := strings.TrimRight(string(n.ClosureLine.Value(src)), "\r\n")
			out = append(out, m.hardwrap(l, width, aDim)...)
		}
		return out
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		var out []string
		for _, l := range rawLines(n, src) {
			out = append(out, m.hardwrap(l, width, 0)...)
		}
		return out
	}
	return m.blocks(n, src, width, false)
}

// code renders a code block indented by two cells, long lines broken.
func (m *markdown) code(n ast.Node, src []byte, width int) []string {
	var out []string
	for _, l := range rawLines(n, src) {
		for _, part := range m.hardwrap(strings.ReplaceAll(l, "\t", "    "), width-2, aCodeBlock) {
			out = append(out, "  "+part)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// hardwrap breaks one line of preformatted text at width cells and styles
// each part.
func (m *markdown) hardwrap(l string, width int, a attr) []string {
	width = max(width, 1)
	var out []string
	for {
		part := l
		if ansi.StringWidth(l) > width {
			part = ansi.Truncate(l, width, "")
			if part == "" { // a character wider than the line
				_, size := firstRune(l)
				part = l[:size]
			}
		}
		out = append(out, m.styled(part, a))
		l = l[len(part):]
		if l == "" {
			return out
		}
	}
}

func (m *markdown) styled(s string, a attr) string {
	if s == "" {
		return s
	}
	if sgr := m.sgr(a); sgr != "" {
		return sgr + s + ansi.ResetStyle
	}
	return s
}

// list renders the items of l with their markers, continuation lines
// aligned under the item's text.
func (m *markdown) list(l *ast.List, src []byte, width int) []string {
	depth := 0
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	n := l.ChildCount()
	markers := make([]string, 0, n)
	mw := 0
	for i := range n {
		var mk string
		if l.IsOrdered() {
			mk = strconv.Itoa(l.Start+i) + string(l.Marker) + " "
		} else {
			mk = [...]string{"• ", "◦ ", "▪ "}[min(depth, 2)]
		}
		markers = append(markers, mk)
		mw = max(mw, ansi.StringWidth(mk))
	}
	var out []string
	i := 0
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		if i > 0 && !l.IsTight {
			out = append(out, "")
		}
		mk := strings.Repeat(" ", mw-ansi.StringWidth(markers[i])) + markers[i]
		body := m.blocks(it, src, width-mw, l.IsTight)
		if len(body) == 0 {
			body = []string{""}
		}
		for j, line := range body {
			switch {
			case j == 0:
				out = append(out, m.styled(mk, aDim)+line)
			case line == "":
				out = append(out, "")
			default:
				out = append(out, strings.Repeat(" ", mw)+line)
			}
		}
		i++
	}
	return out
}

// mdSpan is a run of text with one styling.
type mdSpan struct {
	text string
	a    attr
}

// inline collects the inline content of n as spans; a hard line break is
// a span "\n".
func (m *markdown) inline(n ast.Node, src []byte, a attr, out []mdSpan) []mdSpan {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if !c.IsRaw() {
				v = unescape(v)
			}
			out = append(out, mdSpan{string(v), a})
			switch {
			case c.HardLineBreak():
				out = append(out, mdSpan{"\n", a})
			case c.SoftLineBreak():
				out = append(out, mdSpan{" ", a})
			}
		case *ast.String:
			v := c.Value
			if !c.IsRaw() && !c.IsCode() {
				v = unescape(v)
			}
			out = append(out, mdSpan{string(v), a})
		case *ast.CodeSpan:
			out = append(out, mdSpan{plainText(c, src), a | aCode})
		case *ast.Emphasis:
			x := aItalic
			if c.Level >= 2 {
				x = aBold
			}
			out = m.inline(c, src, a|x, out)
		case *ast.Link:
			start := len(out)
			out = m.inline(c, src, a|aLink, out)
			var label strings.Builder
			for _, s := range out[start:] {
				label.WriteString(s.text)
			}
			if dest := string(c.Destination); dest != "" && dest != label.String() && dest != "mailto:"+label.String() {
				out = append(out, mdSpan{" (" + dest + ")", a | aDim})
			}
		case *ast.AutoLink:
			out = append(out, mdSpan{string(c.Label(src)), a | aLink})
		case *ast.Image:
			out = append(out, mdSpan{"[image: " + plainText(c, src) + "]", a | aDim})
			if len(c.Destination) > 0 {
				out = append(out, mdSpan{" (" + string(c.Destination) + ")", a | aDim})
			}
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				out = append(out, mdSpan{strings.ReplaceAll(string(seg.Value(src)), "\n", " "), a})
			}
		default:
			out = m.inline(c, src, a, out)
		}
	}
	return out
}

// plainText is the text of n's inline descendants without styling.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// unescape resolves backslash escapes and character references, as an
// HTML renderer would.
func unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') >= 0 {
		v = util.UnescapePunctuations(v)
	}
	if bytes.IndexByte(v, '&') >= 0 {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(v))
	}
	return v
}

// rawLines are the source lines of a block without their line endings.
func rawLines(n ast.Node, src []byte) []string {
	lines := n.Lines()
	out := make([]string, 0, lines.Len())
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(src)), "\r\n"))
	}
	return out
}
