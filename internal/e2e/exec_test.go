package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// callOutput is the function_call_output the model was sent for callID, or
// "" when the request has none.
func callOutput(r modeltest.Recorded, callID string) (string, bool) {
	for _, it := range r.InputItems() {
		if it["type"] == "function_call_output" && it["call_id"] == callID {
			s, _ := it["output"].(string)
			return s, true
		}
	}
	return "", false
}

// modelRequests is what the fake model received, which must be n requests
// (else the test fails).
func modelRequests(t *testing.T, fm *modeltest.Server, n int) []modeltest.Recorded {
	t.Helper()
	reqs := fm.Requests()
	if len(reqs) != n {
		t.Fatalf("the model got %d requests, want %d", len(reqs), n)
	}
	return reqs
}

// userTexts are the texts of the user messages in a Responses request.
func userTexts(r modeltest.Recorded) []string {
	var out []string
	for _, it := range r.InputItems() {
		if it["role"] != "user" {
			continue
		}
		switch c := it["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			for _, p := range c {
				if m, ok := p.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// scriptToolLoop queues bash, then read, then a final answer.
func scriptToolLoop(fm *modeltest.Server) {
	fm.Script(modeltest.ToolCall("c1", "bash", `{"comm`, `and":"echo hi-from-bash"}`))
	fm.Script(modeltest.ToolCall("c2", "read", `{"pa`, `th":"a.txt"}`))
	fm.Script(modeltest.Text("All ", "done."))
}

func TestExecToolLoop(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stderrHas  []string
		bashOutHas string // in the function_call_output of the bash call
		code       int
	}{
		{
			name:       "yes approves",
			args:       []string{"exec", "--yes", "run the loop"},
			stderrHas:  []string{"approval for bash (risk process)", "approved (--yes)"},
			bashOutHas: "hi-from-bash",
		},
		{
			name:       "without yes denies",
			args:       []string{"exec", "run the loop"},
			stderrHas:  []string{"approval for bash (risk process)", "denied (pass --yes to approve)"},
			bashOutHas: "denied",
			code:       3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			scriptToolLoop(fm)
			in := newInstance(t, providerConfig(fm.URL()))
			r := in.run(in.env, "", tc.args...)
			// The turn completes either way: a denied call is a result the
			// model sees, and it then answers; exit 3 says a call was denied.
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			if diff := cmp.Diff("All done.\n", r.stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			for _, s := range tc.stderrHas {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			reqs := modelRequests(t, fm, 3)
			if got := userTexts(reqs[0]); !cmp.Equal(got, []string{"run the loop"}) {
				t.Errorf("first request user messages = %q", got)
			}
			out, ok := callOutput(reqs[1], "c1")
			if !ok || !strings.Contains(out, tc.bashOutHas) {
				t.Errorf("second request: bash output %q (present %v), want it to contain %q", out, ok, tc.bashOutHas)
			}
			if strings.Contains(tc.bashOutHas, "denied") && strings.Contains(out, "hi-from-bash") {
				t.Errorf("denied bash call ran: %q", out)
			}
			out, ok = callOutput(reqs[2], "c2")
			if !ok || !strings.Contains(out, "hello from a.txt") {
				t.Errorf("third request: read output %q (present %v), want the file's text", out, ok)
			}
		})
	}
}

func TestExecJSONPrintsEvents(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "read", `{"path":"a.txt"}`))
	fm.Script(modeltest.Text("Fi", "ne."), modeltest.Usage(10, 2))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.runOK(in.env, "", "exec", "--json", "read it")
	var types []string
	var sid string
	var seq uint64
	for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var ev struct {
			Type      string  `json:"type"`
			SessionID string  `json:"session_id"`
			Seq       uint64  `json:"seq"`
			Content   *string `json:"content"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line %d is not JSON: %q", i+1, line)
		}
		if i == 0 {
			sid = ev.SessionID
		} else {
			if ev.SessionID != sid || ev.Seq != seq+1 {
				t.Errorf("line %d: session %q seq %d, want session %q seq %d", i+1, ev.SessionID, ev.Seq, sid, seq+1)
			}
			seq = ev.Seq
		}
		if ev.Type == "assistant.delta" && len(types) > 0 && types[len(types)-1] == "assistant.delta" {
			continue // fragments vary in number; keep one
		}
		types = append(types, ev.Type)
	}
	want := []string{
		"session.started", "turn.started", "assistant.completed",
		"tool.proposed", "tool.started", "tool.completed",
		"assistant.delta", "assistant.completed", "turn.completed",
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s\nstdout:\n%s", diff, r.stdout)
	}
	if sid == "" {
		t.Error("session.started has no session_id")
	}
}

func TestExecPromptFromStdin(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"dash", []string{"exec", "-"}},
		{"no prompt", []string{"exec"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.Text("ok"))
			in := newInstance(t, providerConfig(fm.URL()))
			r := in.run(in.env, "prompt from stdin\n", tc.args...)
			if r.code != 0 || r.stdout != "ok\n" {
				t.Fatalf("exit %d stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := modelRequests(t, fm, 1)
			if diff := cmp.Diff([]string{"prompt from stdin"}, userTexts(reqs[0])); diff != "" {
				t.Errorf("user messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecNoAPIKey(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("never"))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.run(in.withEnv("OPENAI_API_KEY"), "", "exec", "--yes", "hi")
	if r.code == 0 {
		t.Fatalf("exit 0 without a key; stdout %q stderr %q", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Errorf("stderr does not name OPENAI_API_KEY:\n%s", r.stderr)
	}
	if n := len(fm.Requests()); n != 0 {
		t.Errorf("model got %d requests without a key", n)
	}
}

func TestExecTurnFailed(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close() // nothing listens there any more: connection refused
	tests := []struct {
		name     string
		url      func(fm *modeltest.Server) string
		messages []string // in the turn failed line
		requests int
	}{
		{"HTTP 500, retries exhausted", func(fm *modeltest.Server) string { return fm.URL() }, []string{"500", "upstream exploded"}, 1},
		{"connection refused", func(*modeltest.Server) string { return closedURL }, []string{"connection refused"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.HTTPError(500, `{"error":{"message":"upstream exploded"}}`, ""))
			in := newInstance(t, providerConfig(tc.url(fm)))
			r := in.run(in.env, "", "exec", "--yes", "hi")
			if r.code == 0 {
				t.Fatalf("exit 0; stderr:\n%s", r.stderr)
			}
			line := ""
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.HasPrefix(l, "scv: turn failed (provider_error): ") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("stderr lacks a `scv: turn failed (provider_error): ` line:\n%s", r.stderr)
			}
			for _, m := range tc.messages {
				if !strings.Contains(line, m) {
					t.Errorf("turn failed line %q lacks %q", line, m)
				}
			}
			if strings.Contains(r.stderr, "sk-test") {
				t.Errorf("stderr shows the API key:\n%s", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if n := len(fm.Requests()); n != tc.requests {
				t.Errorf("model got %d requests with max_retries = 0, want %d", n, tc.requests)
			}
		})
	}
}

func TestExecBadConfig(t *testing.T) {
	in := newInstance(t, "[providers.openai]\nbase_url = \"http://127.0.0.1:9\"\nbogus_key = 1\n")
	r := in.run(in.env, "", "exec", "--yes", "hi")
	if r.code == 0 {
		t.Fatalf("exit 0 with an unknown config key")
	}
	for _, s := range []string{in.home + "/config.toml:3", "providers.openai.bogus_key"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

// TestExecPromptTooLong: a prompt above 256 KiB (from stdin) is refused
// with a message and a non-zero exit, not a hang.
func TestExecPromptTooLong(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.runWithin(20*time.Second, in.env, strings.Repeat("x", proto.MaxPromptBytes+1), "exec", "--yes", "-")
	if r.code == 0 || !strings.Contains(r.stderr, "262144") {
		t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 0 {
		t.Errorf("model got %d requests for a refused prompt", n)
	}
}

// TestExecInterrupt: SIGINT during a streaming turn cancels it; scv exec
// says so and exits 130.
func TestExecInterrupt(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("partial "), modeltest.Hang())
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.start("exec", "--yes", "hang")
	stdout, stderr := r.stdout, r.stderr
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "partial") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(stdout.String(), "partial") {
		t.Fatalf("no streamed text within 30 s; stderr:\n%s", stderr)
	}
	if got := r.interrupt(t); got != 130 {
		t.Errorf("scv exec exited %d after SIGINT, want 130", got)
	}
	if !strings.Contains(stderr.String(), "turn cancelled") {
		t.Errorf("stderr does not say the turn was cancelled:\n%s", stderr)
	}
}

// TestExecShowsWriteDiff: a write's approval note on stderr carries the
// planned change as a diff, its control characters made visible, and the
// model never receives the diff, only the call's result.
func TestExecShowsWriteDiff(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"hello from a.txt\nnew \u001b[8mhidden line\n","mode":"replace"}`))
	fm.Script(modeltest.Text("written"))
	in := newInstance(t, providerConfig(fm.URL()))
	r := in.runOK(in.env, "", "exec", "--yes", "edit a.txt")
	want := "scv: approval for write (risk filesystem): approved (--yes)\n" +
		"scv:   | replace a.txt (37 bytes)\n" +
		"scv:   diff of a.txt: +1 -0 lines\n" +
		"scv:   | --- a/a.txt\n" +
		"scv:   | +++ b/a.txt\n" +
		"scv:   | @@ -1 +1,2 @@\n" +
		"scv:   |  hello from a.txt\n" +
		"scv:   | +new ␛[8mhidden line\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks the approval with its diff:\n%s\nwant:\n%s", r.stderr, want)
	}
	if strings.Contains(r.stderr, "\x1b[8m") {
		t.Error("a raw escape from the file content reached stderr")
	}
	reqs := modelRequests(t, fm, 2)
	for i, req := range reqs {
		if b, _ := json.Marshal(req.Body); strings.Contains(string(b), "+++ b/a.txt") || strings.Contains(string(b), "@@ -1") {
			t.Errorf("request %d carries the diff: %s", i+1, b)
		}
	}
}
