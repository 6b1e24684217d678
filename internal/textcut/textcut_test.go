package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"héllo", 2, "h"},
		{"héllo", 3, "hé"},
		{"héllo", 99, "héllo"},
		{"héllo", 0, ""},
		{"héllo", -1, ""},
		{"日本", 5, "日"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := Prefix(tt.s, tt.n); got != tt.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestTrimEnd(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ab\xc3", "ab"},       // first byte of é
		{"abé", "abé"},         // whole
		{"a\xe6\x97", "a"},     // two of 日's three bytes
		{"a\xf0\x9f\x98", "a"}, // three of an emoji's four
		{"a\xf0\x9f\x98\x80", "a\xf0\x9f\x98\x80"},
		{"ab\x80", "ab\x80"}, // a stray continuation byte is not a cut character
		{"", ""},
	}
	for _, tt := range tests {
		if got := TrimEnd(tt.in); got != tt.want {
			t.Errorf("TrimEnd(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(TrimEnd([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimEnd([]byte(%q)) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTrimStart(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\xa9llo", "llo"},             // the tail of é
		{"\x97\xa5b", "b"},             // the tail of 日
		{"\x9f\x98\x80!", "!"},         // the tail of an emoji
		{"\x80\x80\x80\x80x", "\x80x"}, // not UTF-8: three bytes at most
		{"ok", "ok"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := TrimStart(tt.in); got != tt.want {
			t.Errorf("TrimStart(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(TrimStart([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimStart([]byte(%q)) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Every cut of valid text at every byte offset stays valid text.
func TestCutsOfValidTextStayValid(t *testing.T) {
	s := strings.Repeat("aé日😀", 3)
	for i := 0; i <= len(s); i++ {
		for _, got := range []string{Prefix(s, i), TrimEnd(s[:i]), TrimStart(s[i:])} {
			if !utf8.ValidString(got) {
				t.Fatalf("cut at %d gave invalid UTF-8 %q", i, got)
			}
		}
	}
}
