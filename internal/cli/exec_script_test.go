package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestExecScripts runs the scripts of testdata/script/exec: the exit
// statuses of `scv exec` (answered, answered with denials, failed, usage)
// and its --json error events, start-up errors included (docs/runtime.md,
// section 9), against a scripted fake model on 127.0.0.1.
func TestExecScripts(t *testing.T) {
	runScripts(t, "exec", map[string]scriptCmd{"fakemodel": cmdFakeModel})
}

// cmdFakeModel implements `fakemodel SCRIPT`: serve the model script
// SCRIPT (modeltest.LoadScript's JSON: one list of steps per request) on
// 127.0.0.1 until the script ends, and set MODEL_URL to its base URL.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakemodel SCRIPT")
	}
	steps, err := modeltest.LoadScript(ts.MkAbs(args[0]))
	ts.Check(err)
	h := modeltest.NewHandler()
	for _, s := range steps {
		h.Script(s...)
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv("MODEL_URL", srv.URL)
}

// The hook.ran events of a turn are stored with the session's events:
// `scv sessions export --format jsonl` has them.
func TestHookRunsAreStored(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("done"))
	home, ws := t.TempDir(), t.TempDir()
	hook := filepath.Join(ws, "hook.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/bash\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n[[hooks.run]]\nname = \"seen\"\nevent = \"user_prompt\"\ncommand = [%q]\n", fake.URL(), hook)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env{"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(t.Context(), append([]string{"--scv-home", home}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env); code != ExitOK {
			t.Fatalf("scv %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	run("exec", "--workspace", ws, "hello")
	var listed struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(run("sessions", "list", "--all", "--json"), "\n", 2)[0]), &listed); err != nil || listed.SessionID == "" {
		t.Fatalf("sessions list: %v", err)
	}
	exported := run("sessions", "export", listed.SessionID, "--format", "jsonl")
	if !strings.Contains(exported, `"type":"hook.ran"`) || !strings.Contains(exported, `"hook":"seen","event":"user_prompt"`) {
		t.Errorf("the stored session has no hook.ran of the hook:\n%s", exported)
	}
}
