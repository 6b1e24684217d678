package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
)

// TestMain registers the scv command for every script test of this
// package: scripts run `scv ...` as a child of the test binary, through
// cli.Run with the script's environment and working directory.
func TestMain(m *testing.M) {
	if os.Getenv(envHostileMCP) != "" {
		os.Exit(hostileMCPMain())
	}
	testscript.Main(m, map[string]func(){
		"scv": func() {
			stdio := Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
			os.Exit(Run(context.Background(), os.Args[1:], stdio, Environ(os.Environ())))
		},
		// The fake MCP server, for [mcp.servers] tables of the scripts.
		"mcpfake": mcptest.Main,
	})
}

func TestConfigScripts(t *testing.T) {
	runScripts(t, "config", map[string]scriptCmd{
		// mode PERM FILE: the file's permission bits are PERM (octal).
		"mode": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: mode PERM FILE")
			}
			want, err := strconv.ParseUint(args[0], 8, 32)
			ts.Check(err)
			st, err := os.Stat(ts.MkAbs(args[1]))
			ts.Check(err)
			if got := uint64(st.Mode().Perm()); (got == want) == neg {
				ts.Fatalf("mode of %s is %04o, want %s%04o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
			}
		},
	})
}

// TestConfigExitCodes checks exit statuses in-process, which scripts
// cannot tell apart.
func TestConfigExitCodes(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".scv"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".scv", "config.toml"), []byte("[providers.openai]\nmodel = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"config", "show", "--workspace", t.TempDir()}, ExitOK, ""},
		{[]string{"config"}, ExitUsage, "config needs a subcommand"},
		{[]string{"config", "show", "extra"}, ExitUsage, "unknown command"},
		{[]string{"config", "show", "--approval-policy", "sometimes"}, ExitUsage, `--approval-policy must be ask-on-risk, ask-always, deny-on-risk or ask-unsandboxed, not "sometimes"`},
		{[]string{"config", "show", "--workspace", ws}, ExitFailure, "providers.openai.model: a project config may not set this key"},
		{[]string{"config", "init"}, ExitOK, ""},
		{[]string{"config", "init"}, ExitFailure, "already exists"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"--scv-home", home}, tt.args...)
			code := Run(t.Context(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
			if code != tt.code || !strings.Contains(errb.String(), tt.err) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr containing %q", code, errb.String(), tt.code, tt.err)
			}
			if tt.code != ExitOK && out.Len() > 0 {
				t.Errorf("stdout on failure: %q", out.String())
			}
		})
	}
}

// TestConfigShowNeverPrintsKeys runs `scv config show` with every kind of
// secret set and checks none reaches stdout or stderr.
func TestConfigShowNeverPrintsKeys(t *testing.T) {
	home := t.TempDir()
	body := "[providers.openai]\napi_key = \"sk-inline-AAA\"\nheaders = { Authorization = \"Bearer hdr-BBB\" }\n[web]\nbrave_api_key = \"brave-CCC\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env{"HOME": t.TempDir(), "OPENAI_API_KEY": "env-DDD", "BRAVE_SEARCH_API_KEY": "env-EEE"}
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"--scv-home", home, "config", "show", "--workspace", t.TempDir()}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	all := out.String() + errb.String()
	for _, secret := range []string{"AAA", "BBB", "CCC", "DDD", "EEE"} {
		if strings.Contains(all, secret) {
			t.Errorf("output shows secret %s:\n%s", secret, all)
		}
	}
	for _, want := range []string{
		"providers.openai.api_key = <redacted>  # user " + filepath.Join(home, "config.toml"),
		"providers.openai.headers.Authorization = <redacted>  # user ",
		"web.brave_api_key = <redacted>  # user ",
		`providers.openai.api_key_env = "OPENAI_API_KEY"  # default`,
	} {
		if !strings.Contains(out.String(), want+"") {
			t.Errorf("stdout lacks %q", want)
		}
	}
}
