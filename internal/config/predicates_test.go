package config

import (
	"regexp"
	"testing"
)

// The hand-written predicates replace regular expressions that used to be
// compiled when the program started; each must accept exactly what its
// expression accepted.
func TestPredicatesMatchTheirExpressions(t *testing.T) {
	inputs := []string{"", "a", "A", "_", "-", "0", "a0", "0a", "a-b", "-a", "a-", "a_b", "a.b", "a b", "ä",
		"sk-abc", "OPENAI_API_KEY", "_X", "9X", "x-y_z", "low", "x-high", "High", "a!b", "X-Api-Key", "a:b",
		"abcdefghijklmnopqrstuvwxyzabcdef", "abcdefghijklmnopqrstuvwxyzabcdefg", "a\x00b", "a\nb",
		"label-with-63-characters-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "label-with-64-characters-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"!#$%&'*+.^_`|~", "a\"b", "a(b)", "a/b"}
	tests := []struct {
		name string
		re   string
		fn   func(string) bool
	}{
		{"isBareKey", `^[A-Za-z0-9_-]+$`, isBareKey},
		{"isEnvName", `^[A-Za-z_][A-Za-z0-9_]*$`, isEnvName},
		{"isEffortWord", `^[a-z][a-z_-]{0,31}$`, isEffortWord},
		{"isHostLabel", `^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`, isHostLabel},
		{"isHeaderName", "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", isHeaderName},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(tt.re)
		for _, in := range inputs {
			if got, want := tt.fn(in), re.MatchString(in); got != want {
				t.Errorf("%s(%q) = %v, the expression %s says %v", tt.name, in, got, tt.re, want)
			}
		}
	}
	for _, tt := range []struct{ msg, kind string }{
		{"toml: cannot decode TOML string into struct field config.Agent.MaxSteps of type int", "string"},
		{"cannot decode TOML integer into a string", "integer"},
		{"cannot decode TOML ", ""},
		{"something else", ""},
	} {
		kind, ok := tomlKind(tt.msg)
		if kind != tt.kind || ok != (tt.kind != "") {
			t.Errorf("tomlKind(%q) = %q, %v; want %q", tt.msg, kind, ok, tt.kind)
		}
	}
}
