package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/sandbox"
)

// TestDoctor runs scv doctor against a fake endpoint on 127.0.0.1, one
// working and one failing MCP server, a database and a broken one: one
// line per check with its mark, the fix beside each problem, exit 1 when
// one fails, the key's value never shown, and no request with --offline.
func TestDoctor(t *testing.T) {
	m := modeltest.NewHandler()
	m.Models = []string{"a-model", "fake-model"}
	var listings atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			listings.Add(1)
		}
		m.ServeHTTP(w, r)
	}))
	defer srv.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home, ws := t.TempDir(), t.TempDir()
	cfg := "[providers.openai]\nbase_url = \"" + srv.URL + "\"\nmodel = \"fake-model\"\n\n" +
		"[mcp.servers.good]\ncommand = \"" + exe + "\"\nenv = { " + envHostileMCP + " = \"1\" }\n\n" +
		"[mcp.servers.broken]\ncommand = \"" + exe + "\"\nenv = { " + envHostileMCP + " = \"1\", " + envHostileFail + " = \"1\" }\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "sk-doctor-secret-99"
	env := Env{"SCV_HOME": home, "HOME": t.TempDir(), "OPENAI_API_KEY": key, "PATH": t.TempDir(), "TERM": "xterm-256color"}
	doctor := func(env Env, args ...string) (string, int) {
		out, errs, code := runCLI(t, env, append(append([]string{}, args...), "doctor", "--workspace", ws)...)
		if errs != "" {
			t.Errorf("stderr: %s", errs)
		}
		if strings.Contains(out, key) {
			t.Errorf("doctor printed the key:\n%s", out)
		}
		return out, code
	}
	want := func(out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !regexp.MustCompile("(?m)^" + l).MatchString(out) {
				t.Errorf("no line matching %q in:\n%s", l, out)
			}
		}
	}

	// A database to check: the first scv sessions command creates none,
	// so let a real session create it.
	m.Script(modeltest.Text("hi"))
	if _, errs, code := runCLI(t, env, "exec", "--workspace", ws, "hello"); code != 0 {
		t.Fatalf("exec: %d %s", code, errs)
	}
	out, code := doctor(env)
	if code != ExitFailure {
		t.Errorf("exit %d with a failing MCP server, want 1", code)
	}
	want(out,
		`✓ config +user .*config\.toml$`,
		`✓ provider +openai: responses at http://127\.0\.0\.1:\d+, model fake-model$`,
		`✓ key +OPENAI_API_KEY is set$`,
		`✓ endpoint +reachable: 2 models, fake-model listed$`,
		`· daemon +not running .* → `+"`scv start`",
		`✓ database +.*scv\.db \(.*1 session, 1 turn\), integrity ok$`,
		`✓ mcp good +ready: 2 tools`,
		`✗ mcp broken +failed: the server exited during start-up .* → `+"`scv mcp test broken`",
		`· agent claude +not installed$`,
		`· terminal +stdout is not a terminal`,
		`· sandbox +off; this kernel: .* → sandbox.mode confines`,
	)
	if n := listings.Load(); n != 1 {
		t.Errorf("%d GET /models, want 1", n)
	}

	// A sandbox that is on: ✓ where this kernel enforces every rule, ✗
	// with the fix where it would refuse to run commands.
	sbCfg := cfg + "\n[sandbox]\nmode = \"workspace-write\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(sbCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, env, "doctor", "--offline", "--workspace", ws)
	if st := sandboxState(&config.Config{Sandbox: config.Sandbox{Mode: config.SandboxWorkspaceWrite, AppliesTo: []string{config.SandboxBash}}}, sandbox.Probe()); st.Refuses == "" {
		want(out, `✓ sandbox +workspace-write, no network, for bash; Landlock ABI \d+`)
	} else {
		want(out, `✗ sandbox +workspace-write, no network, for bash; sandboxed commands are refused → `)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	// --offline asks nothing; a model the endpoint does not list fails.
	out, _ = doctor(env, "--model", "zz")
	want(out, `✗ model +"zz" is not among the 2 models the endpoint lists → set providers.openai.model`)
	before := listings.Load()
	out, _, _ = runCLI(t, env, "doctor", "--offline", "--workspace", ws)
	if listings.Load() != before || len(m.Requests()) != 1 {
		t.Errorf("--offline made a request")
	}
	want(out, `· endpoint +not asked \(--offline\)$`)

	// No key: the key line fails with the variable to set, and the
	// endpoint is not asked.
	noKey := Env{"SCV_HOME": home, "HOME": env["HOME"], "PATH": env["PATH"]}
	out, code = doctor(noKey)
	want(out, `✗ key +provider "openai" needs an API key: set the environment variable OPENAI_API_KEY`, `· endpoint +not asked: no key$`)
	if code != ExitFailure {
		t.Errorf("exit %d without a key", code)
	}

	// A configuration that does not load, and a damaged database.
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[providers.openai\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "state", "scv.db"), []byte(strings.Repeat("not a database ", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(home, "state", "scv.db-wal"))
	out, _ = doctor(env)
	want(out, `✗ config +.*config\.toml:1.* → fix the line named`, `✗ database +.* → move the file aside`)
}
