package mention

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func withCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

func TestFindRanks(t *testing.T) {
	var ix Index
	ix.Add([]string{"internal/", "internal/tui/", "internal/tui/composer.go", "internal/tui/composer_test.go",
		"docs/tui.md", "internal/config/config.go", "README.md", "cmd/scv/main.go", "internal/Mention/Walk.go", "x/c/o/m/p.go"})
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		// The file's own name first, then the shorter path.
		{"composer", 3, []string{"internal/tui/composer.go", "internal/tui/composer_test.go"}},
		// Exact name beats a prefix; case is ignored.
		{"readme.md", 5, []string{"README.md"}},
		{"walk", 5, []string{"internal/Mention/Walk.go"}},
		// A subsequence across components matches; one that is not in
		// order does not.
		{"itcomp", 5, []string{"internal/tui/composer.go", "internal/tui/composer_test.go"}},
		{"zzz", 5, []string{}},
		// limit bounds the answer.
		{"go", 2, []string{"x/c/o/m/p.go", "cmd/scv/main.go"}},
		// An empty query lists the shallowest first.
		{"", 3, []string{"README.md", "internal/", "docs/tui.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := ix.Find(tc.query, tc.limit)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Find(%q, %d) (-want +got):\n%s", tc.query, tc.limit, d)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []Token
	}{
		{"explain @main.go please", []Token{{Path: "main.go", Loose: true}}},
		{"@a/b.go, and @\"my file.txt\" too", []Token{{Path: "a/b.go,", Loose: true}, {Path: "my file.txt"}}},
		{"mail a@b.com", nil},
		{"line\n@x\t@y", []Token{{Path: "x", Loose: true}, {Path: "y", Loose: true}}},
		{"@ alone and @\"unterminated", nil},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, Tokens(tc.in)); d != "" {
			t.Errorf("Tokens(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}
