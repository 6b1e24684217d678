package clawbot_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/clawbot"
)

func TestSplit(t *testing.T) {
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	tests := []struct {
		name   string
		in     string
		chunks int
	}{
		{"empty", "  \n", 0},
		{"short", "hello", 1},
		{"exactly the limit", rep("a", clawbot.MaxChunkChars), 1},
		{"one past the limit", rep("a", clawbot.MaxChunkChars+1), 2},
		{"wide characters", rep("你", clawbot.MaxChunkChars+5), 2},
		{"emoji", rep("👍🏽", clawbot.MaxChunkChars), 2},
		{"lines", rep("line of text\n", 1000), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clawbot.Split(tt.in)
			if len(got) != tt.chunks {
				t.Fatalf("%d chunks, want %d", len(got), tt.chunks)
			}
			for i, c := range got {
				if n := utf8.RuneCountInString(c); n > clawbot.MaxChunkChars || n == 0 {
					t.Errorf("chunk %d has %d characters", i, n)
				}
				if !utf8.ValidString(c) {
					t.Errorf("chunk %d splits a character", i)
				}
			}
			if strings.Join(got, "") == "" && tt.chunks > 0 {
				t.Error("no text")
			}
		})
	}
	// Lines stay whole when a line end is near the limit.
	for i, c := range clawbot.Split(rep("line of text\n", 1000)) {
		if !strings.HasSuffix(c, "line of text") {
			t.Errorf("chunk %d ends %q, not at a line end", i, c[len(c)-10:])
		}
	}
	// Nothing is lost below the byte limit: the chunks join back to the
	// text (breaks fall on the whitespace they drop).
	in := rep("word ", 3000)
	if got := strings.Join(clawbot.Split(in), " "); got != strings.TrimSpace(in) {
		t.Error("split text does not join back to the answer")
	}
}

func TestSplitCutsAt64KiB(t *testing.T) {
	in := strings.Repeat("é", 40000) // 80,000 bytes
	chunks := clawbot.Split(in)
	all := strings.Join(chunks, "")
	if len(all) > clawbot.MaxAnswerBytes {
		t.Errorf("%d bytes sent, above %d", len(all), clawbot.MaxAnswerBytes)
	}
	if !strings.HasSuffix(all, "[The rest of this answer was cut: it was longer than 64 KiB.]") {
		t.Errorf("no cut note at the end: …%s", all[len(all)-80:])
	}
	if !utf8.ValidString(all) {
		t.Error("the cut split a character")
	}
	if len(all) < clawbot.MaxAnswerBytes-200 {
		t.Errorf("only %d bytes kept", len(all))
	}
}

func TestSanitizer(t *testing.T) {
	s := clawbot.NewSanitizer([]string{"tok-SECRET-123", "short", "Zq9+fake/KEY=1"}, map[string]string{"/home/u/proj": ".", "/home/u": "~", "/home/u/.scv": "$SCV_HOME"})
	tests := map[string]string{
		"token TOK-secret-123 here":                 "token … here",
		"short words stay":                          "short words stay",
		"url?k=Zq9%2Bfake%2FKEY%3D1&x=1":            "url?k=…&x=1",
		"the answer was cut at tok-SECRE":           "the answer was cut at …",
		"see /home/u/proj/main.go":                  "see ./main.go",
		"config in /home/u/.scv/config.toml":        "config in $SCV_HOME/config.toml",
		"notes in /home/u/notes.txt":                "notes in ~/notes.txt",
		"key sk-abcdefghijklmnop1234":               "key …",
		"Authorization: Bearer abc.def":             "Authorization: …",
		"password=hunter22":                         "password=…", // the name stays, the value goes
		"colour \x1b[31mred\x1b[0m\r\nline\ttab":    "colour [31mred[0m\nline\ttab",
		"bidi \u202eevil\u202c and joiner 👨\u200d👩": "bidi evil and joiner 👨\u200d👩",
		"bad utf8 \xff!":                            "bad utf8 \uFFFD!",
	}
	for in, want := range tests {
		if got := s.Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
