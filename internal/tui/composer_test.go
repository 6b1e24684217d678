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
		{"shift+enter is a newline too", []tea.Msg{txt("a"), k(tea.KeyEnter, tea.ModShift), txt("b")}, "a\nb", 1, 1},
		{"backspace joins lines", []tea.Msg{txt("a"), k('j', tea.ModCtrl), txt("b"), k(tea.KeyHome, 0), k(tea.KeyBackspace, 0)}, "ab", 0, 1},
		{"delete joins the next line", []tea.Msg{txt("a"), k('j', tea.ModCtrl), txt("b"), k(tea.KeyUp, 0), k(tea.KeyEnd, 0), k(tea.KeyDelete, 0)}, "ab", 0, 1},
		{"ctrl+w deletes a word", []tea.Msg{tea.PasteMsg{Content: "go test ./..."}, k('w', tea.ModCtrl)}, "go test ", 0, 8},
		{"ctrl+u deletes to the start", []tea.Msg{tea.PasteMsg{Content: "abc"}, k(tea.KeyLeft, 0), k('u', tea.ModCtrl)}, "c", 0, 0},
		{"ctrl+k deletes to the end", []tea.Msg{tea.PasteMsg{Content: "abc"}, k(tea.KeyLeft, 0), k(tea.KeyLeft, 0), k('k', tea.ModCtrl)}, "a", 0, 1},
		{"ctrl+a and ctrl+e", []tea.Msg{tea.PasteMsg{Content: "bc"}, k('a', tea.ModCtrl), txt("a"), k('e', tea.ModCtrl), txt("d")}, "abcd", 0, 4},
		{"paste keeps newlines, drops controls", []tea.Msg{tea.PasteMsg{Content: "x\r\ny\x07\tz"}}, "x\ny z", 1, 3},
		{"paste drops escapes and bidi overrides", []tea.Msg{tea.PasteMsg{Content: "a\x1b[31mb\u202ec\u200bd"}}, "a[31mbcd", 0, 8},
		{"a lone CR is a line end", []tea.Msg{tea.PasteMsg{Content: "a\rb"}}, "a\nb", 1, 1},
		{"ctrl-modified keys insert nothing", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModCtrl}}, "", 0, 0},
		{"alt-modified keys insert nothing", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModAlt}}, "", 0, 0},
		{"shifted keys insert their text", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "X", Mod: tea.ModShift}}, "X", 0, 1},
		{"keys with caps or num lock insert their text", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "X", Mod: tea.ModCapsLock}, tea.KeyPressMsg{Code: '1', Text: "1", Mod: tea.ModNumLock}}, "X1", 0, 2},
		{"ctrl+v does not read a clipboard", []tea.Msg{txt("a"), k('v', tea.ModCtrl)}, "a", 0, 1},
		{"alt+b moves back a word, alt+d deletes one", []tea.Msg{tea.PasteMsg{Content: "go test ./..."}, tea.KeyPressMsg{Code: 'b', Text: "b", Mod: tea.ModAlt}, tea.KeyPressMsg{Code: 'b', Text: "b", Mod: tea.ModAlt}, tea.KeyPressMsg{Code: 'd', Text: "d", Mod: tea.ModAlt}}, "go  ./...", 0, 3},
		{"typing replaces a selection", []tea.Msg{tea.PasteMsg{Content: "abc"}, k(tea.KeyLeft, tea.ModShift), k(tea.KeyLeft, tea.ModShift), txt("X")}, "aX", 0, 2},
		{"right moves to the next line", []tea.Msg{tea.PasteMsg{Content: "a\nb"}, k(tea.KeyUp, 0), k(tea.KeyRight, 0)}, "a\nb", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newComposer()
			c.Fit(40, 6)
			for _, m := range tc.msgs {
				if refused := c.Update(m); refused != "" {
					t.Fatalf("refused: %s", refused)
				}
			}
			got := []any{c.Value(), c.ta.Line(), c.ta.Column()}
			if d := cmp.Diff([]any{tc.want, tc.row, tc.col}, got); d != "" {
				t.Errorf("value,row,col (-want +got):\n%s", d)
			}
		})
	}
}

// view is the composer's frame without colour and trailing blanks.
func view(c *composer) []string {
	lines := strings.Split(ansi.Strip(c.View()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

func TestComposerWrapsAndScrolls(t *testing.T) {
	c := newComposer()
	c.SetValue("the quick brown fox jumps over the lazy dog")
	c.Fit(14, 6) // "> " + 12 cells of text
	if d := cmp.Diff([]string{"> the quick", "  brown fox", "  jumps over", "  the lazy", "  dog"}, view(&c)); d != "" {
		t.Errorf("words wrap at spaces (-want +got):\n%s", d)
	}
	c.Fit(14, 2)
	if d := cmp.Diff([]string{"  the lazy", "  dog"}, view(&c)); d != "" {
		t.Errorf("a short window keeps the cursor row in sight (-want +got):\n%s", d)
	}
	c.SetValue(strings.Repeat("0123456789", 3)) // no spaces: broken at the width
	c.Fit(12, 6)                                // 10 cells of text
	if d := cmp.Diff([]string{"> 0123456789", "  0123456789", "  0123456789", ""}, view(&c)); d != "" {
		t.Errorf("a long word breaks at the width (-want +got):\n%s", d)
	}
}

func TestComposerWrapsWideRunes(t *testing.T) {
	c := newComposer()
	c.SetValue("日本語の文章です") // 8 runes, 16 cells
	c.Fit(12, 6)           // 10 cells of text
	if d := cmp.Diff([]string{"> 日本語の文", "  章です"}, view(&c)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// TestComposerHistoryRows: Up and Down leave the text for prompt history
// only from its first and last screen rows, so a long wrapped line can be
// walked first.
func TestComposerHistoryRows(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Width = 20 })
	h.submit("earlier")
	long := "one two three four five six seven eight" // three rows at this width
	h.m.Update(tea.PasteMsg{Content: long})
	for i, want := range []string{long, long, "earlier"} {
		h.keys(up)
		if got := h.m.composer.Value(); got != want {
			t.Fatalf("after Up #%d composer = %q, want %q", i+1, got, want)
		}
	}
	h.keys(down)
	if got := h.m.composer.Value(); got != long {
		t.Fatalf("Down from history = %q, want the draft back", got)
	}
}

func TestComposerRefusesOversizedPaste(t *testing.T) {
	h := newHarness(t, nil)
	h.typeText("keep me")
	h.m.Update(tea.PasteMsg{Content: strings.Repeat("x\n", maxComposerRows)})
	if got := h.m.composer.Value(); got != "keep me" {
		t.Errorf("composer after an oversized paste = %q, want it untouched", got)
	}
	last := h.m.tr.last()
	if last == nil || last.kind != kindError || !strings.Contains(last.text, "paste refused") || !strings.Contains(last.text, "10001 lines") {
		t.Errorf("no notice naming the refused paste; last item %+v", last)
	}
	h.m.Update(tea.PasteMsg{Content: strings.Repeat("x\n", maxComposerRows-1)})
	if got := h.m.composer.ta.LineCount(); got != maxComposerRows {
		t.Errorf("a paste up to the limit: %d lines, want %d", got, maxComposerRows)
	}
}
