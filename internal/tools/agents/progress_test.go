package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// streamProgress replays a recorded stream in uneven chunks and returns
// the progress lines it yields and the session id it reported.
func streamProgress(t testing.TB, agent, name string) ([]string, string) {
	t.Helper()
	stdout, err := os.ReadFile(filepath.Join("testdata", "streams", agent, name, "stdout.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	d, _ := Lookup(agent)
	var lines []string
	p := newParser(d.Format, DefaultOutputLimit)
	p.progress = func(s string) { lines = append(lines, s) }
	for i, n := 0, 1; len(stdout) > 0; i++ {
		n = min(len(stdout), 1+(i*977)%4096)
		p.Write(stdout[:n])
		stdout = stdout[n:]
	}
	return lines, p.finish().SessionID
}

// TestRecordedStreamsProgress replays every recording of a real CLI and
// checks the progress lines it yields and the session id a later call
// resumes.
func TestRecordedStreamsProgress(t *testing.T) {
	steps := func(format string, exit bool) []string {
		var out []string
		for i := 1; i <= 10; i++ {
			out = append(out, fmt.Sprintf(format, i))
			if exit {
				out = append(out, fmt.Sprintf("exit 0: echo step %d", i))
			}
		}
		return out
	}
	const hello = "Hello from the fake model."
	tests := []struct {
		agent, name, id string
		want            []string
	}{
		{"claude", "text", "90daa18b-a6ba-4a06-bd16-e7fc729b37ce", []string{hello}},
		{"claude", "stdin-pipe", "28e39af7-ccef-4747-b4b6-a65e30c5946b", []string{hello}},
		{"claude", "shell", "340ddb02-f1f4-4160-adbd-2bcb17be8553", []string{"Bash: echo hi", "The command printed: hi"}},
		{"claude", "loop10", "81421332-53fe-4575-81d7-532f9876a13c", append(steps("Bash: echo step %d", false), "All ten steps ran: step 1 through step 10.")},
		// The synthetic assistant message of a failure is its text.
		{"claude", "badkey", "5971fdef-f66f-4451-bfec-c49762d566ea", []string{"Failed to authenticate. API Error: 401 Incorrect API key provided (scripted)."}},
		{"claude", "nocreds", "c4703bbb-c9a3-473c-9f86-bc3e880988ed", []string{"Not logged in · Please run /login"}},
		{"claude", "http500", "f99dfc9d-d503-4462-ac56-0a8072f22f87", []string{"API Error: 500 scripted internal error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:43155)."}},
		{"claude", "model-not-found", "88ef8f0b-5edc-453e-8333-eb8b501dfb15", []string{"There's an issue with the selected model (no-such-model). It may not exist or you may not have access to it. Run --model to pick a different model."}},
		{"claude", "root-bypass", "", nil},
		{"codex", "text", "01a22893-7a72-7c23-83d5-3b535a64d5ed", nil},
		{"codex", "stdin-pipe", "01a22894-50ac-71e3-8f4a-4787521609ea", nil},
		{"codex", "shell", "01a22893-7c56-7193-afe1-c4ed07749e5c", []string{"$ echo hi", "exit 0: echo hi"}},
		{"codex", "loop10", "01a22894-325f-75b1-9f65-b53fadb2289b", steps("$ echo step %d", true)},
		{"codex", "badkey", "01a22893-b4f3-7693-9071-62539b5c5153", nil},
		{"codex", "http500", "01a22893-d1a2-7c72-b6bf-ee8e96215a18", nil},
		{"codex", "model-not-found", "01a22893-cffa-7500-abaa-1b181af19e56", nil},
		{"codex", "nocreds", "01a22893-7ecf-70b0-92d0-b74bcb80a5f3", nil},
		{"codex", "nocreds-provider", "01a22893-b31c-7053-8fb5-67396ab69436", nil},
		{"codex", "not-git-repo", "", nil},
		{"pi", "text", "01a2289a-7971-77a1-9c8a-b8f5ab34ce24", []string{hello}},
		{"pi", "stdin-pipe", "01a2289a-eb1c-7664-a9e0-f92725a533af", []string{hello}},
		{"pi", "shell", "01a2289a-7db1-76b4-b997-0bf9fed50e1f", []string{"Bash: echo hi", "The command printed: hi"}},
		{"pi", "loop10", "01a2289a-decb-7054-b1f5-4e60b198aa94", append(steps("Bash: echo step %d", false), "All ten steps ran: step 1 through step 10.")},
		{"pi", "badkey", "01a2289a-88a1-72b3-8ea1-6be350ed5b68", nil},
		{"pi", "http500", "01a2289a-8f38-71f7-b0e4-b77f44cc2bb2", nil},
		{"pi", "model-not-found", "", nil},
		{"pi", "model-not-found-provider", "01a2289b-c155-7281-9f3f-920067f41a3f", nil},
		{"pi", "nocreds", "01a2289a-8150-70c8-930c-f3f593b7d35c", nil},
		{"pi", "nocreds-provider", "01a2289b-bdda-71de-a296-408a11ddb590", nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.agent+"/"+tc.name] = true
		t.Run(tc.agent+"/"+tc.name, func(t *testing.T) {
			got, id := streamProgress(t, tc.agent, tc.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			if id != tc.id {
				t.Errorf("session id %q, want %q", id, tc.id)
			}
		})
	}
	for _, agent := range []string{"claude", "codex", "pi"} {
		ents, err := os.ReadDir(filepath.Join("testdata", "streams", agent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() && !seen[agent+"/"+e.Name()] {
				t.Errorf("recording %s/%s has no expected progress", agent, e.Name())
			}
		}
	}
}

// progressOf feeds lines to a parser of format and returns its progress.
func progressOf(f Format, lines ...string) []string {
	var out []string
	p := newParser(f, 1<<16)
	p.progress = func(s string) { out = append(out, s) }
	p.Write([]byte(strings.Join(lines, "\n") + "\n"))
	p.finish()
	return out
}

// TestProgressLines covers the steps the recordings do not show: Codex's
// file changes, searches, MCP calls, failed commands; Claude Code's edits,
// fetches and searches; pi's file tools.
func TestProgressLines(t *testing.T) {
	tests := []struct {
		name  string
		f     Format
		lines []string
		want  []string
	}{
		{"codex file changes", FormatCodex, []string{
			`{"type":"item.completed","item":{"id":"i1","type":"file_change","changes":[{"path":"/home/u/project/internal/app/app.go","kind":"update"}],"status":"completed"}}`,
			`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"/w/new.go","kind":"add"},{"path":"/w/b.go","kind":"update"},{"path":"c.go","kind":"delete"}],"status":"completed"}}`,
			`{"type":"item.completed","item":{"id":"i3","type":"file_change","changes":[{"path":"x/y/z.txt","kind":"delete"}],"status":"failed"}}`,
		}, []string{"Edit …/app/app.go", "Add /w/new.go (+2 more)", "Delete …/y/z.txt failed"}},
		{"codex command failing", FormatCodex, []string{
			`{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"/bin/bash -lc 'go test ./internal/tools/agents/...'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"/bin/bash -lc 'go test ./internal/tools/agents/...'","aggregated_output":"FAIL","exit_code":1,"status":"failed"}}`,
			`{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}`,
		}, []string{"$ go test …/agents/...", "exit 1: go test …/agents/...", "exit declined: rm -rf /"}},
		{"codex search, MCP, message", FormatCodex, []string{
			`{"type":"item.started","item":{"id":"i1","type":"web_search","id":"ws","query":"golang slog handler","action":{"type":"search"}}}`,
			`{"type":"item.started","item":{"id":"i2","type":"mcp_tool_call","server":"docs","tool":"lookup","arguments":{},"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"i3","type":"reasoning","text":"thinking about it"}}`,
			`{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"done"}}`,
		}, []string{"WebSearch golang slog handler", "MCP docs.lookup"}},
		{"claude tools", FormatClaude, []string{
			`{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"\n\nLet me look.\nSecond line."},{"type":"tool_use","name":"Edit","input":{"file_path":"/home/u/project/docs/agents.md","old_string":"a","new_string":"b"}}]}}`,
			`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"WebFetch","input":{"url":"https://user:pw@docs.example.com/a/b?token=abc#x","prompt":"read"}}]}}`,
			`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Grep","input":{"pattern":"func New","path":"/home/u/project/internal"}},{"type":"tool_use","name":"Read","input":{"file_path":"README.md"}}]}}`,
			`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"WebSearch","input":{"query":"bubbletea v2"}},{"type":"tool_use","name":"mcp__docs__lookup","input":{}},{"type":"tool_use","name":"Task","input":{"description":"review the diff"}}]}}`,
			`{"type":"user","message":{"content":[{"type":"tool_result","content":"Bash: not a step"}]}}`,
		}, []string{"Let me look.", "Edit …/docs/agents.md", "WebFetch docs.example.com", "Grep func New in …/project/internal", "Read README.md", "WebSearch bubbletea v2", "mcp__docs__lookup", "Task review the diff"}},
		{"pi tools", FormatPi, []string{
			`{"type":"tool_execution_start","toolCallId":"c1","toolName":"edit","args":{"path":"/w/a/b/c.go","oldText":"x","newText":"y"}}`,
			`{"type":"tool_execution_start","toolCallId":"c2","toolName":"read","args":{"path":"go.mod"}}`,
			`{"type":"tool_execution_start","toolCallId":"c3","toolName":"bash","args":{"command":"curl -s 'https://api.example.com/v1/x?key=secret'"}}`,
			`{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"not progress"}]}}`,
			`{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash"},{"type":"text","text":"Now the tests."}]}}`,
		}, []string{"Edit …/b/c.go", "Read go.mod", "Bash: curl -s 'https://api.example.com/v1/x'", "Now the tests."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, progressOf(tc.f, tc.lines...)); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressRedaction: credential-looking values in what an agent runs
// never reach a progress line.
func TestProgressRedaction(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{`curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig" https://api.example.com/v1/me`, `curl -H "Authorization: …" https://api.example.com/v1/me`},
		{`GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh pr list`, `GITHUB_TOKEN=… gh pr list`},
		{`export OPENAI_API_KEY=sk-proj-abcdefghijklmnop`, `export OPENAI_API_KEY=…`},
		{`mysql --password hunter2hunter2 -u root`, `mysql --password … -u root`},
		{`deploy --api-key=abcd1234efgh5678 --region eu`, `deploy --api-key=… --region eu`},
		{`tool --auth-token s3cr3tvalue123 run`, `tool --auth-token … run`},
		{`echo sk-ant-api03-abcdefghijklmnopqrstuv`, `echo …`},
		{`aws s3 ls --profile x AKIAABCDEFGHIJKLMNOP`, `aws s3 ls --profile x …`},
		{`psql postgres://admin:pa55word@db.internal:5432/app?sslmode=disable`, `psql postgres://db.internal:5432/app`},
		{`curl 'https://example.com/cb?access_token=abc123&x=1'`, `curl 'https://example.com/cb'`},
		{`SECRET=topsecretvalue make release`, `SECRET=… make release`},
		{`git clone https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.com/g/p.git`, `git clone https://gitlab.com/g/p.git`},
		{`slack-notify xoxb-1234567890-abcdefghij`, `slack-notify …`},
		{`gcloud --key AIzaSyA1234567890abcdefghijklmnopqrstuv`, `gcloud --key …`},
		{`echo github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz`, `echo …`},
		{`ls -la /home/u/project/internal`, `ls -la …/project/internal`},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			line := `{"type":"item.started","item":{"id":"i","type":"command_execution","command":` + jsonString(tc.cmd) + `,"status":"in_progress"}}`
			got := progressOf(FormatCodex, line)
			if len(got) != 1 || got[0] != "$ "+tc.want {
				t.Errorf("progress %q, want %q", got, "$ "+tc.want)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
