package mention

import (
	"strings"
	"testing"
)

// TestIgnorePatterns checks the matcher against git's rules, one pattern
// file (in the directory "sub" when domain is set) and one path at a time.
func TestIgnorePatterns(t *testing.T) {
	tests := []struct {
		lines  string
		domain string
		path   string
		isDir  bool
		want   bool
	}{
		{"*.log", "", "a/b/x.log", false, true},
		{"*.log", "", "x.logs", false, false},
		{"build/", "", "build", true, true},
		{"build/", "", "build", false, false}, // directories only
		{"build/", "", "a/build", true, true}, // no inner slash: any depth
		{"/build", "", "a/build", true, false},
		{"/build", "", "build", false, true},
		{"doc/*.txt", "", "doc/a.txt", false, true},
		{"doc/*.txt", "", "x/doc/a.txt", false, false}, // an inner slash anchors
		{"doc/*.txt", "", "doc/sub/a.txt", false, false},
		{"**/gen", "", "a/b/gen", true, true},
		{"a/**/b", "", "a/b", false, true},
		{"a/**/b", "", "a/x/y/b", false, true},
		{"a/**", "", "a/x/y", false, true},
		{"a/**", "", "a", true, false},
		{"*.log\n!keep.log", "", "keep.log", false, false},
		{"!keep.log\n*.log", "", "keep.log", false, true}, // the last match decides
		{"x[0-9].go", "", "x7.go", false, true},
		{"x[!0-9].go", "", "x7.go", false, false},
		{"x[!0-9].go", "", "xa.go", false, true},
		{`\#hash`, "", "#hash", false, true},
		{"#comment", "", "#comment", false, false},
		{"trail   ", "", "trail", false, true},
		{"?.c", "", "ab.c", false, false},
		{"*.o", "sub", "sub/x.o", false, true},
		{"*.o", "sub", "other/x.o", false, false},
		{"*.o", "sub", "sub", true, false},
		{"/top", "sub", "sub/top", false, true},
		{"/top", "sub", "sub/a/top", false, false},
	}
	for _, tc := range tests {
		var domain []string
		if tc.domain != "" {
			domain = strings.Split(tc.domain, "/")
		}
		var ps []pattern
		for _, l := range strings.Split(tc.lines, "\n") {
			if p, ok := parsePattern(l, domain); ok {
				ps = append(ps, p)
			}
		}
		if got := ignored(ps, strings.Split(tc.path, "/"), tc.isDir); got != tc.want {
			t.Errorf("patterns %q in %q, path %q (dir %v): ignored = %v, want %v", tc.lines, tc.domain, tc.path, tc.isDir, got, tc.want)
		}
	}
}
