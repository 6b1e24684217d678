package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// userProblems loads body as the user config and returns the problems with
// the file name replaced by "F".
func userProblems(t *testing.T, body string) []Problem {
	t.Helper()
	f := newFixture(t)
	path := f.user(t, body)
	_, probs := problems(t, f.opts())
	return named(probs, path, "F")
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Problem
	}{
		{"misspelled key", "[tools]\n\ncomand_timeout_seconds = 5\n",
			[]Problem{{"F", 3, "tools.comand_timeout_seconds", `unknown key "tools.comand_timeout_seconds"; did you mean "tools.command_timeout_seconds"?`}}},
		{"unknown table", "# c\n[toolz]\nx = 1\n",
			[]Problem{
				{"F", 2, "toolz", `unknown key "toolz"; did you mean "tools"?`},
				{"F", 3, "toolz.x", `unknown key "toolz"; did you mean "tools"?`},
			}},
		{"unknown top-level key", "model = \"x\"\n",
			[]Problem{{"F", 1, "model", `unknown key "model"`}}},
		{"several at once", "[web]\nenabled = true\nfoo = 1\n[agent]\nbar = 2\n",
			[]Problem{
				{"F", 3, "web.foo", `unknown key "web.foo"`},
				{"F", 5, "agent.bar", `unknown key "agent.bar"`},
			}},
		{"unknown provider field", "[providers.openai]\nmodle = \"x\"\n",
			[]Problem{{"F", 2, "providers.openai.modle", `unknown key "providers.openai.modle"; did you mean "providers.openai.model"?`}}},
		{"dotted key", "tools.max_reed_bytes = 1\n",
			[]Problem{{"F", 1, "tools.max_reed_bytes", `unknown key "tools.max_reed_bytes"; did you mean "tools.max_read_bytes"?`}}},
		{"inline table", "tools = { max_read_bytes = 1, nope = 2 }\n",
			[]Problem{{"F", 1, "tools.nope", `unknown key "tools.nope"`}}},
		{"unknown agent", "\n[agents.gemini]\ncommand = \"gemini\"\n",
			[]Problem{
				{"F", 2, "agents.gemini", `unknown agent "gemini"; known agents: claude, codex, grok, dsh, pi`},
				{"F", 3, "agents.gemini.command", `unknown agent "gemini"; known agents: claude, codex, grok, dsh, pi`},
			}},
		{"unknown agent key", "[agents.pi]\nenv = []\n",
			[]Problem{{"F", 2, "agents.pi.env", `unknown key "agents.pi.env"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, userProblems(t, tt.body)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrongTypesAndSyntax(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Problem
	}{
		{"string for int", "[tools]\n\nmax_read_bytes = \"big\"\n",
			[]Problem{{"F", 3, "tools.max_read_bytes", "wrong type: want an integer, got a TOML string"}}},
		{"int for string", "[providers.openai]\nmodel = 4\n",
			[]Problem{{"F", 2, "providers.openai.model", "wrong type: want a string, got a TOML integer"}}},
		{"string for bool", "[web]\nenabled = \"yes\"\n",
			[]Problem{{"F", 2, "web.enabled", "wrong type: want a boolean (true or false), got a TOML string"}}},
		{"string for bash_login", "[tools]\nbash_login = \"no\"\n",
			[]Problem{{"F", 2, "tools.bash_login", "wrong type: want a boolean (true or false), got a TOML string"}}},
		{"int array for strings", "[agents.grok]\nargs = [1]\n",
			[]Problem{{"F", 2, "agents.grok.args", "wrong type: want an array of strings, got a TOML integer"}}},
		{"value for table", "tools = 3\n",
			[]Problem{{"F", 1, "tools", "wrong type: want a table, got a TOML integer"}}},
		{"float for int", "[agent]\nmax_steps = 1.5\n",
			[]Problem{{"F", 2, "agent.max_steps", "wrong type: want an integer, got a TOML float"}}},
		{"syntax", "[tools]\nmax_read_bytes = = 3\n",
			[]Problem{{"F", 2, "", "unexpected character U+003D '=' at start of value"}}},
		{"duplicate", "[agent]\nmax_steps = 1\nmax_steps = 2\n",
			[]Problem{{"F", 3, "max_steps", "key max_steps is already defined"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := userProblems(t, tt.body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
