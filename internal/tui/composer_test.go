package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

func TestComposerEditing(t *testing.T) {
	k := func(code rune, mod tea.KeyMod) tea.Msg { return tea.KeyPressMsg{Code: code, Mod: mod} }
	txt := func(s string) tea.Msg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }
	tests := []struct {
		name string
		msgs []tea.Msg
		want string
		row  int
		col  int
	}{
		{"typing", []tea.Msg{txt("a"), txt("b"), txt("c")}, "abc", 0, 3},
		{"newline splits the line", []tea.Msg{txt("a"), txt("b"), k(tea.KeyLeft, 0), k('j', tea.ModCtrl)}, "a\nb", 1, 0},
		{"backspace joins lines", []tea.Msg{txt("a"), k('j', tea.ModCtrl), txt("b"), k(tea.KeyHome, 0), k(tea.KeyBackspace, 0)}, "ab", 0, 1},
		{"delete joins the next line", []tea.Msg{txt("a"), k('j', tea.ModCtrl), txt("b"), k(tea.KeyUp, 0), k(tea.KeyEnd, 0), k(tea.KeyDelete, 0)}, "ab", 0, 1},
		{"ctrl+w deletes a word", []tea.Msg{tea.PasteMsg{Content: "go test ./..."}, k('w', tea.ModCtrl)}, "go test ", 0, 8},
		{"ctrl+u deletes to the start", []tea.Msg{tea.PasteMsg{Content: "abc"}, k(tea.KeyLeft, 0), k('u', tea.ModCtrl)}, "c", 0, 0},
		{"paste keeps newlines, drops controls", []tea.Msg{tea.PasteMsg{Content: "x\r\ny\x07\tz"}}, "x\ny z", 1, 3},
		{"ctrl-modified keys insert nothing", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModCtrl}}, "", 0, 0},
		{"right moves to the next line", []tea.Msg{tea.PasteMsg{Content: "a\nb"}, k(tea.KeyUp, 0), k(tea.KeyRight, 0)}, "a\nb", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newComposer()
			c.SetWidth(40)
			for _, m := range tc.msgs {
				c.Update(m)
			}
			got := []any{c.Value(), c.row, c.col}
			if d := cmp.Diff([]any{tc.want, tc.row, tc.col}, got); d != "" {
				t.Errorf("value,row,col (-want +got):\n%s", d)
			}
		})
	}
}

func TestComposerWrapsAndScrolls(t *testing.T) {
	c := newComposer()
	c.SetWidth(13) // "> " + 10 text cells + 1 for the cursor
	c.SetValue(strings.Repeat("0123456789", 3))
	rows, cr, cc := c.visual()
	want := []string{"0123456789", "0123456789", "0123456789", ""}
	if d := cmp.Diff(want, rows); d != "" || cr != 3 || cc != 0 {
		t.Errorf("rows (-want +got):\n%s cursor=%d,%d want 3,0", d, cr, cc)
	}
	c.SetHeight(2)
	got := strings.Split(ansi.Strip(c.View()), "\n")
	if d := cmp.Diff([]string{"  0123456789", "   "}, got); d != "" {
		t.Errorf("view keeps the cursor row in sight (-want +got):\n%s", d)
	}
}

func TestComposerWrapsWideRunes(t *testing.T) {
	c := newComposer()
	c.SetWidth(13)         // 10 cells of text
	c.SetValue("日本語の文章です") // 8 runes, 16 cells
	rows, cr, cc := c.visual()
	if d := cmp.Diff([]string{"日本語の文", "章です"}, rows); d != "" || cr != 1 || cc != 3 {
		t.Errorf("rows (-want +got):\n%s cursor=%d,%d want 1,3", d, cr, cc)
	}
}
