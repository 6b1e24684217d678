package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs scv args in-process with a home of its own and returns the
// exit status and stderr.
func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	home := t.TempDir()
	code := Run(t.Context(), append([]string{"--scv-home", home}, args...), Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb},
		Env{"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test"})
	return code, out.String(), errb.String()
}

// TestUnknownCommandHints: a near miss suggests the command; a prompt
// typed as an argument suggests scv exec.
func TestUnknownCommandHints(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"exce"}, `scv: unknown command "exce" for "scv"; did you mean exec? (scv --help lists the commands)` + "\n"},
		{[]string{"sesions"}, `scv: unknown command "sesions" for "scv"; did you mean sessions? (scv --help lists the commands)` + "\n"},
		{[]string{"fix the bug"}, `scv: unknown command "fix the bug" for "scv"; to run a prompt use: scv exec "fix the bug" (scv --help lists the commands)` + "\n"},
		{[]string{"fix", "the", "bug"}, `scv: unknown command "fix" for "scv"; to run a prompt use: scv exec "fix the bug" (scv --help lists the commands)` + "\n"},
		{[]string{"refactor"}, `scv: unknown command "refactor" for "scv"; to run a prompt use: scv exec "refactor" (scv --help lists the commands)` + "\n"},
		{[]string{"sessions", "lsit"}, `scv: unknown command "lsit" for "scv sessions"; did you mean list? (scv sessions --help lists them)` + "\n"},
		{[]string{"sessions", "zzzzzz"}, `scv: unknown command "zzzzzz" for "scv sessions"` + "\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runIn(t, "", tc.args...)
			if code != ExitUsage || out != "" || errs != tc.want {
				t.Errorf("exit %d stdout %q stderr %q, want %d and %q", code, out, errs, ExitUsage, tc.want)
			}
		})
	}
}

// TestWorkspaceErrors: every command that takes a workspace refuses a
// missing one and a file with one clear message (exit 2); scv sessions
// list accepts a missing directory, whose sessions may still be stored.
func TestWorkspaceErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "gone")
	commands := []struct {
		name        string
		args        []string
		missingOK   bool
		stdinPrompt bool
	}{
		{"exec", []string{"exec", "--workspace", "WS", "hi"}, false, false},
		{"tools list", []string{"tools", "list", "--workspace", "WS"}, false, false},
		{"tools call", []string{"tools", "call", "read", `{"path":"a"}`, "--workspace", "WS"}, false, false},
		{"mcp list", []string{"mcp", "list", "--workspace", "WS"}, false, false},
		{"sessions list", []string{"sessions", "list", "--workspace", "WS"}, true, false},
		{"run (the daemon)", []string{"run", "--workspace", "WS"}, false, false},
	}
	for _, c := range commands {
		for _, ws := range []struct{ path, want string }{
			{file, "scv: workspace " + file + " is not a directory; pass --workspace with a directory\n"},
			{missing, "scv: workspace " + missing + " does not exist; pass --workspace with an existing directory\n"},
		} {
			t.Run(c.name+" "+filepath.Base(ws.path), func(t *testing.T) {
				args := append([]string(nil), c.args...)
				for i, a := range args {
					if a == "WS" {
						args[i] = ws.path
					}
				}
				code, _, errs := runIn(t, "", args...)
				if c.missingOK && ws.path == missing {
					if code != ExitOK {
						t.Errorf("exit %d, want 0; stderr %q", code, errs)
					}
					return
				}
				if code != ExitUsage || errs != ws.want {
					t.Errorf("exit %d stderr %q, want %d and %q", code, errs, ExitUsage, ws.want)
				}
			})
		}
	}
}

// TestPromptTooLongNamesSize: a prompt over session.max_prompt_bytes is
// refused before anything runs, naming its real size (even past what
// stdin is read into memory for) and the limit.
func TestPromptTooLongNamesSize(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[session]\nmax_prompt_bytes = 10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(t.Context(), append([]string{"--scv-home", home, "exec", "--workspace", ws}, args...),
			Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb}, Env{"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test"})
		return code, errb.String()
	}
	code, errs := run("", "twelve bytes")
	if want := "scv: the prompt is 12 bytes, over the limit of 10 (session.max_prompt_bytes); shorten it or raise the limit\n"; code != ExitUsage || errs != want {
		t.Errorf("exit %d stderr %q, want 2 and %q", code, errs, want)
	}
	huge := strings.Repeat("x", 64<<20+5)
	code, errs = run(huge, "-")
	if want := "scv: the prompt on stdin is 67108869 bytes, over the largest limit of 67108864 (session.max_prompt_bytes); shorten it\n"; code != ExitUsage || errs != want {
		t.Errorf("exit %d stderr %q, want 2 and %q", code, errs, want)
	}
}

// TestSessionOverrides: a session the TUI starts through the daemon
// carries the client's flags, else its SCV_* variables, and its key.
func TestSessionOverrides(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[providers.lab]\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"LAB_KEY\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env{"HOME": t.TempDir(), "SCV_PROVIDER": "lab", "SCV_MODEL": "env-model", "SCV_BASE_URL": "http://127.0.0.1:8/v1", "LAB_KEY": "sk-lab", "OPENAI_API_KEY": "sk-openai"}
	tests := []struct {
		name string
		g    globals
		want [5]string // provider, model, base URL, key variable, key
	}{
		{"environment", globals{}, [5]string{"lab", "env-model", "http://127.0.0.1:8/v1", "LAB_KEY", "sk-lab"}},
		{"flags win", globals{model: "flag-model", provider: "openai"}, [5]string{"openai", "flag-model", "http://127.0.0.1:8/v1", "OPENAI_API_KEY", "sk-openai"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.ctx, g.env, g.scvHome = t.Context(), env, home
			o := g.sessionOverrides(t.TempDir())
			if got := [5]string{o.Provider, o.Model, o.BaseURL, o.ProviderKeyEnv, o.ProviderKey}; got != tc.want {
				t.Errorf("overrides %q, want %q", got, tc.want)
			}
		})
	}
	// Without the variable no key is sent.
	g := globals{ctx: t.Context(), env: Env{"HOME": t.TempDir()}, scvHome: home}
	if o := g.sessionOverrides(t.TempDir()); o.ProviderKey != "" || o.ProviderKeyEnv != "" || o.Model != "" {
		t.Errorf("overrides without settings: %+v", o)
	}
}

// TestWantsExecJSON: --json anywhere after exec makes every error an
// event, also one found before the flag is parsed.
func TestWantsExecJSON(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"exec", "--json", "hi"}, true},
		{[]string{"exec", "--bogus", "--json", "hi"}, true},
		{[]string{"--scv-home", "exec", "exec", "--json=true", "hi"}, true},
		{[]string{"--model", "m", "exec", "hi", "--json"}, true},
		{[]string{"exec", "--", "--json"}, false},
		{[]string{"status", "--json"}, false},
		{[]string{"--scv-home", "h", "status", "exec", "--json"}, false},
		{[]string{"exec", "hi"}, false},
	}
	for _, tc := range tests {
		if got := wantsExecJSON(tc.args); got != tc.want {
			t.Errorf("wantsExecJSON(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
	code, out, _ := runIn(t, "", "exec", "--bogus", "--json", "hi")
	if code != ExitUsage || !strings.Contains(out, `"code":"usage_error"`) {
		t.Errorf("exit %d stdout %q, want 2 and a usage_error event", code, out)
	}
}
