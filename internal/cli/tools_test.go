package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestToolsScripts runs the scripts of testdata/script/tools: `scv tools
// list` and `scv tools call` through the real command line: approvals, the
// read, write and bash results and the printed object (docs/runtime.md,
// sections 7, 12 and 13).
func TestToolsScripts(t *testing.T) { runScripts(t, "tools", nil) }

// scriptCmd is a testscript command.
type scriptCmd = func(ts *testscript.TestScript, neg bool, args []string)

// runScripts runs the scripts of testdata/script/<dir>, each with SCV_HOME
// and HOME of its own in its work directory, with `exits` and cmds.
func runScripts(t *testing.T, dir string, cmds map[string]scriptCmd) {
	all := map[string]scriptCmd{"exits": cmdExits}
	maps.Copy(all, cmds)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script", dir),
		Setup: func(env *testscript.Env) error {
			env.Setenv("SCV_HOME", filepath.Join(env.WorkDir, "scvhome"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "userhome"))
			return nil
		},
		Cmds: all,
	})
}

// cmdExits implements `exits CODE PROG [ARGS...]`: run PROG like exec
// (stdout and stderr are kept for the following stdout/stderr/cmp
// commands) and require exit status CODE, which `! exec` cannot check.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("run %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// TestToolsCallTextOutput checks the other half of the output rule of `scv
// tools call` (docs/runtime.md, "Exact forms that scripts rely on"): a tool
// whose result is text, not JSON (web_fetch), is printed as a JSON string.
// The page is served on 127.0.0.1, which the user config allows.
func TestToolsCallTextOutput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello \"tools\"\n")
	}))
	defer srv.Close()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[web]\nallow_private_addresses = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := []string{"--scv-home", home, "tools", "call", "web_fetch", `{"url":"` + srv.URL + `/page"}`, "--yes", "--workspace", t.TempDir()}
	code := Run(t.Context(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
	}
	want := map[string]any{
		"name": "web_fetch", "success": true, "truncated": false,
		"output": "URL: " + srv.URL + "/page\nStatus: 200\nContent-Type: text/plain; charset=utf-8\nCharacters: 0-14 of 14\n\nhello \"tools\"\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools call web_fetch (-want +got):\n%s", diff)
	}
}

// TestMCPScripts runs the scripts of testdata/script/mcp: `scv mcp list`,
// `scv mcp test` and MCP tools through `scv tools list` and `scv tools
// call`, against the fake MCP server (the `mcpfake` command).
func TestMCPScripts(t *testing.T) { runScripts(t, "mcp", nil) }

func TestHooksScripts(t *testing.T) { runScripts(t, "hooks", nil) }
