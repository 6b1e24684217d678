package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestExecExitStatus: scv exec tells its outcomes apart for scripts: 0
// answered, 1 failed, 2 usage error, 3 answered with a denied call (130,
// interrupted, is TestExecInterruptReapsBash).
func TestExecExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		script func(fm *modeltest.Server)
		args   []string
		code   int
		stdout string
	}{
		{"answered", func(fm *modeltest.Server) { fm.Script(modeltest.Text("fine")) }, []string{"exec", "hi"}, 0, "fine\n"},
		{"answered with a denied call", func(fm *modeltest.Server) {
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo x"}`))
			fm.Script(modeltest.Text("could not"))
		}, []string{"exec", "hi"}, 3, "could not\n"},
		{"failed", func(fm *modeltest.Server) {
			fm.Script(modeltest.HTTPError(500, `{"error":{"message":"boom"}}`, ""))
		}, []string{"exec", "hi"}, 1, ""},
		{"usage error", func(*modeltest.Server) {}, []string{"exec", "--continue", "--resume", "x", "hi"}, 2, ""},
		{"quiet and verbose", func(*modeltest.Server) {}, []string{"exec", "--quiet", "--verbose", "hi"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			tc.script(fm)
			in := newInstance(t, providerConfig(fm.URL()))
			r := in.run(in.env, "", tc.args...)
			if r.code != tc.code || r.stdout != tc.stdout {
				t.Errorf("exit %d stdout %q, want %d %q; stderr:\n%s", r.code, r.stdout, tc.code, tc.stdout, r.stderr)
			}
		})
	}
}

// jsonLines decodes every stdout line as a JSON object.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q (%v)", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestExecJSONErrors: with --json an error scv exec reports on stderr is
// also an error event on stdout, start-up errors included.
func TestExecJSONErrors(t *testing.T) {
	badConfig := "[providers.openai]\nbase_url = \"http://127.0.0.1:9\"\nbogus_key = 1\n"
	tests := []struct {
		name    string
		config  string // "" is the fake model's
		env     []string
		args    []string
		code    int
		errCode string
		message string // in the event's message
	}{
		{"bad config", badConfig, nil, []string{"exec", "--json", "hi"}, 1, "config_error", "providers.openai.bogus_key"},
		{"no api key", "", []string{"OPENAI_API_KEY"}, []string{"exec", "--json", "hi"}, 1, "api_key_missing", "OPENAI_API_KEY"},
		{"missing workspace", "", nil, []string{"exec", "--json", "--workspace", "nowhere", "hi"}, 2, "workspace_error", "does not exist"},
		{"workspace is a file", "", nil, []string{"exec", "--json", "--workspace", "a.txt", "hi"}, 2, "workspace_error", "is not a directory"},
		{"usage", "", nil, []string{"exec", "--json", "--continue", "--resume", "x", "hi"}, 2, "usage_error", "--continue and --resume"},
		{"unknown flag", "", nil, []string{"exec", "--json", "--bogus", "hi"}, 2, "usage_error", "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			config := tc.config
			if config == "" {
				config = providerConfig(fm.URL())
			}
			in := newInstance(t, config)
			r := in.run(in.withEnv(tc.env...), "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			evs := jsonLines(t, r.stdout)
			if len(evs) != 1 {
				t.Fatalf("stdout holds %d events, want one error event:\n%s", len(evs), r.stdout)
			}
			ev := evs[0]
			msg, _ := ev["message"].(string)
			if ev["type"] != "error" || ev["code"] != tc.errCode || ev["fatal"] != true || !strings.Contains(msg, tc.message) {
				t.Errorf("event = %v, want an error event with code %q and fatal true, its message holding %q", ev, tc.errCode, tc.message)
			}
			// The same error once on stderr.
			if n := strings.Count(r.stderr, "scv: "); n != 1 || !strings.Contains(r.stderr, tc.message) {
				t.Errorf("stderr does not report the error once:\n%s", r.stderr)
			}
		})
	}
}

// TestExecJSONTurnFailed: a failed turn's turn.failed event is on stdout
// with --json, and exec exits 1.
func TestExecJSONTurnFailed(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.HTTPError(500, `{"error":{"message":"upstream exploded"}}`, ""))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.run(in.env, "", "exec", "--json", "hi")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	var types []string
	for _, ev := range jsonLines(t, r.stdout) {
		types = append(types, ev["type"].(string))
	}
	if len(types) == 0 || types[len(types)-1] != "turn.failed" {
		t.Errorf("events %v do not end with turn.failed", types)
	}
}

// TestExecDenialReportedOnce: a denied call is one stderr line, never
// "denied: denied:", whether the user (no --yes) or the policy denied it.
func TestExecDenialReportedOnce(t *testing.T) {
	tests := []struct {
		name string
		args []string
		line string
	}{
		{"not approved", []string{"exec", "go"}, "scv: approval for bash (risk process): denied (pass --yes to approve)"},
		{"policy", []string{"--approval-policy", "deny-on-risk", "exec", "--yes", "go"},
			`scv: bash call denied: the approval policy "deny-on-risk" does not allow bash calls (risk process); do not retry this call`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo x"}`))
			fm.Script(modeltest.Text("ok"))
			in := newInstance(t, providerConfig(fm.URL()))
			r := in.run(in.env, "", tc.args...)
			if r.code != 3 {
				t.Errorf("exit %d, want 3", r.code)
			}
			var denied []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.Contains(l, "denied") {
					denied = append(denied, l)
				}
			}
			if len(denied) != 1 || denied[0] != tc.line {
				t.Errorf("denial lines %q, want exactly %q; stderr:\n%s", denied, tc.line, r.stderr)
			}
		})
	}
}

// TestExecQuiet: --quiet leaves the answer alone on stdout and nothing on
// stderr, unless the turn fails.
func TestExecQuiet(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo x"}`))
	fm.Script(modeltest.Text("the answer"))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.run(in.env, "", "exec", "--quiet", "go")
	if r.code != 3 || r.stdout != "the answer\n" || r.stderr != "" {
		t.Errorf("exit %d stdout %q stderr %q, want 3, the answer, nothing", r.code, r.stdout, r.stderr)
	}

	fm.Script(modeltest.HTTPError(500, `{"error":{"message":"upstream exploded"}}`, ""))
	r = in.run(in.env, "", "exec", "--quiet", "go")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "scv: turn failed (provider_error): ") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("failed turn with --quiet: exit %d, stderr %q, want 1 and one turn failed line", r.code, r.stderr)
	}
}

// TestExecVerbose: --verbose shows a bash call's output on stderr, control
// characters made visible; without it the output stays off stderr.
func TestExecVerbose(t *testing.T) {
	for _, verbose := range []bool{true, false} {
		t.Run("verbose="+strconv.FormatBool(verbose), func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo first-line; printf 'bell\\007\\n'; echo last-line"}`))
			fm.Script(modeltest.Text("done"))
			in := newInstance(t, providerConfig(fm.URL()))
			args := []string{"exec", "--yes", "go"}
			if verbose {
				args = []string{"exec", "--yes", "--verbose", "go"}
			}
			r := in.run(in.env, "", args...)
			if r.code != 0 || r.stdout != "done\n" {
				t.Fatalf("exit %d stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, l := range []string{"scv:   | first-line", "scv:   | bell␇", "scv:   | last-line"} {
				if strings.Contains(r.stderr, l+"\n") != verbose {
					t.Errorf("stderr holds %q: %v, want %v; stderr:\n%s", l, !verbose, verbose, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "\a") {
				t.Errorf("stderr holds a raw BEL")
			}
		})
	}
}

// TestExecRetryLine: a provider retry is one readable stderr line, not a
// log record.
func TestExecRetryLine(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.HTTPError(503, `{"error":{"message":"busy"}}`, "1"))
	fm.Script(modeltest.Text("second try"))
	in := newInstance(t, "[providers.openai]\nbase_url = \""+fm.URL()+"\"\nmax_retries = 3\n")
	r := in.run(in.env, "", "exec", "hi")
	if r.code != 0 || r.stdout != "second try\n" {
		t.Fatalf("exit %d stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "scv: provider returned 503, retrying in 1s (attempt 2/4)\n"; r.stderr != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	if r := in.run(in.env, "", "exec", "--quiet", "hi"); strings.Contains(r.stderr, "retrying") {
		t.Errorf("--quiet shows the retry: %q", r.stderr)
	}
}

// TestExecInterruptReapsBash: Ctrl+C (SIGINT) while a bash call runs
// cancels the turn, stops the command's process group (no orphan) and
// exits 130.
func TestExecInterruptReapsBash(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"sleep 300 & echo $! > sleeper.pid; wait"}`))
	fm.Script(modeltest.Text("never"))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.start("exec", "--yes", "--json", "sleep")
	pidFile := filepath.Join(in.ws, "sleeper.pid")
	var sleeper int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(pidFile)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
			sleeper = n
			break
		}
	}
	if sleeper == 0 {
		t.Fatalf("the bash call did not start within 30 s; stderr:\n%s", r.stderr)
	}
	t.Cleanup(func() { _ = syscall.Kill(sleeper, syscall.SIGKILL) }) // only if the test failed to see it gone
	if got := r.interrupt(t); got != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr:\n%s", got, r.stderr)
	}
	gone := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(sleeper, 0); errors.Is(err, syscall.ESRCH) {
			gone = true
			break
		}
	}
	if !gone {
		t.Errorf("the bash call's child %d outlived scv exec", sleeper)
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (none after the cancel)", n)
	}
	evs := jsonLines(t, r.stdout.String())
	if last := evs[len(evs)-1]; last["type"] != "turn.cancelled" {
		t.Errorf("last event %v, want turn.cancelled", last)
	}
}
