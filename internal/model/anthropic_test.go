package model_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

func anthropicClient(t *testing.T, url string, edit func(*model.Options)) (model.Client, *sleeps) {
	t.Helper()
	return newClient(t, model.WireAnthropic, url, edit)
}

// loop is a history in the middle of a tool loop: the current prompt, an
// assistant message with signed thinking and two calls, their results.
var loop = model.Request{
	Instructions: "You are careful.",
	Messages: []model.Message{
		{Role: model.Assistant, Content: "An answer of a trimmed turn."},
		{Role: model.Assistant, Content: "Earlier.", ToolCalls: []model.ToolCall{{ID: "toolu_0", Name: "list", Arguments: ""}},
			Thinking: []model.Thinking{{Text: "old", Signature: "sig-old"}}},
		{Role: model.ToolRole, ToolCallID: "toolu_0", Name: "list", Content: ""},
		{Role: model.User, Content: "fix the test"},
		{Role: model.Assistant, Content: "Looking.", ToolCalls: []model.ToolCall{
			{ID: "toolu_1", Name: "bash", Arguments: `{"command":"go test"}`},
			{ID: "toolu_2", Name: "read", Arguments: `not json`},
		}, Thinking: []model.Thinking{{Text: "run it", Signature: "sig-1"}, {Redacted: "ENCRYPTED"}}},
		{Role: model.ToolRole, ToolCallID: "toolu_1", Name: "bash", Content: "FAIL"},
		{Role: model.ToolRole, ToolCallID: "toolu_2", Name: "read", Content: "package x"},
	},
	Tools: []model.ToolSpec{
		{Name: "bash", Description: "Run a command.", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "read", Description: "Read a file."},
	},
	HostedWebSearch: true,
	MaxOutputTokens: 4000,
}

func TestAnthropicRequestShape(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	c, _ := anthropicClient(t, srv.URL(), func(o *model.Options) { o.ReasoningEffort = "low"; o.Model = "claude-test" })
	if _, _, err := run(t, c, loop); err != nil {
		t.Fatal(err)
	}
	want := decode(t, `{
		"model": "claude-test", "max_tokens": 8096, "stream": true,
		"thinking": {"type": "enabled", "budget_tokens": 4096},
		"system": [{"type": "text", "text": "You are careful.", "cache_control": {"type": "ephemeral"}}],
		"tools": [
			{"type": "web_search_20250305", "name": "web_search"},
			{"name": "bash", "description": "Run a command.", "input_schema": {"type":"object","properties":{"command":{"type":"string"}}}},
			{"name": "read", "description": "Read a file.", "input_schema": {"type":"object","properties":{}}, "cache_control": {"type": "ephemeral"}}
		],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "(earlier conversation omitted)"}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "An answer of a trimmed turn."},
				{"type": "text", "text": "Earlier."},
				{"type": "tool_use", "id": "toolu_0", "name": "list", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_0", "content": "(no output)"},
				{"type": "text", "text": "fix the test"}
			]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "run it", "signature": "sig-1"},
				{"type": "redacted_thinking", "data": "ENCRYPTED"},
				{"type": "text", "text": "Looking."},
				{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "go test"}},
				{"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": "FAIL"},
				{"type": "tool_result", "tool_use_id": "toolu_2", "content": "package x", "cache_control": {"type": "ephemeral"}}
			]}
		]
	}`)
	rec := srv.Requests()[0]
	if d := cmp.Diff(want, any(rec.Body)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != testKey || rec.Header.Get("Anthropic-Version") != "2023-06-01" || rec.Header.Get("Authorization") != "" {
		t.Errorf("request %s with headers %v", rec.Path, rec.Header)
	}
	if d := cmp.Diff([]string{"bash", "read"}, rec.ToolNames()); d != "" || !rec.HasHostedWebSearch() || rec.Wire() != "anthropic" {
		t.Errorf("helpers: tools %v, web search %v, wire %q", rec.ToolNames(), rec.HasHostedWebSearch(), rec.Wire())
	}
}

func TestAnthropicThinkingOnlyWithEffort(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	c, _ := anthropicClient(t, srv.URL()+"/v1", nil)
	req := loop
	req.MaxOutputTokens = 0
	if _, _, err := run(t, c, req); err != nil {
		t.Fatal(err)
	}
	rec := srv.Requests()[0]
	if rec.Body["thinking"] != nil || rec.Body["max_tokens"] != float64(8192) || rec.Path != "/v1/messages" {
		t.Errorf("thinking %v, max_tokens %v, path %s", rec.Body["thinking"], rec.Body["max_tokens"], rec.Path)
	}
	if strings.Contains(string(rec.Raw), "thinking") {
		t.Errorf("thinking blocks replayed without thinking enabled: %s", rec.Raw)
	}
	if _, err := model.New(model.Options{WireAPI: model.WireAnthropic, BaseURL: srv.URL(), ReasoningEffort: "extreme"}); err == nil || !strings.Contains(err.Error(), `reasoning_effort "extreme"`) {
		t.Errorf("New with an unknown effort: %v", err)
	}
}

func TestAnthropicThinkingToolLoopAndUsage(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Reasoning("I should ", "list files."), modeltest.Text("Let me look."),
		modeltest.ToolCall("toolu_9", "bash", `{"command":`, `"ls"}`), modeltest.CachedUsage(10, 30, 200, 50))
	c, _ := anthropicClient(t, srv.URL(), func(o *model.Options) { o.ReasoningEffort = "medium" })
	r, reasoning, err := streamAll(t, c, hello)
	if err != nil {
		t.Fatal(err)
	}
	want := model.Response{
		Content:   "Let me look.",
		ToolCalls: []model.ToolCall{{ID: "toolu_9", Name: "bash", Arguments: `{"command":"ls"}`}},
		Thinking:  []model.Thinking{{Text: "I should list files.", Signature: "sig-0-20"}},
		Usage:     &model.Usage{InputTokens: 260, OutputTokens: 30, TotalTokens: 290, CacheReadTokens: 200, CacheWriteTokens: 50},
	}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if reasoning != "I should list files." {
		t.Errorf("reasoning = %q", reasoning)
	}
}

func TestAnthropicStops(t *testing.T) {
	cases := []struct {
		name    string
		steps   []modeltest.Step
		want    model.Response
		wantErr string
	}{
		{"max_tokens is a failure", []modeltest.Step{modeltest.Text("The list:"), modeltest.StopReason("max_tokens")}, model.Response{},
			`cut off at the output token limit (stop_reason "max_tokens")`},
		{"context window exceeded is a failure", []modeltest.Step{modeltest.StopReason("model_context_window_exceeded")}, model.Response{},
			"context window is full"},
		{"refusal without text", []modeltest.Step{modeltest.StopReason("refusal")}, model.Response{}, `declined to answer (stop_reason "refusal")`},
		{"refusal text is the answer; its calls never run", []modeltest.Step{modeltest.Text("I won't do that."), modeltest.ToolCall("toolu_1", "bash", `{}`),
			modeltest.StopReason("refusal")}, model.Response{Content: "I won't do that.", Usage: &model.Usage{OutputTokens: 1, TotalTokens: 1}}, ""},
		{"pause_turn keeps the text", []modeltest.Step{modeltest.Text("Searching…"), modeltest.StopReason("pause_turn")},
			model.Response{Content: "Searching…", Usage: &model.Usage{OutputTokens: 1, TotalTokens: 1}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(tc.steps...)
			c, _ := anthropicClient(t, srv.URL(), nil)
			r, _, err := run(t, c, hello)
			wantResponse(t, r, err, tc.want, tc.wantErr)
		})
	}
}

func TestAnthropicRetries(t *testing.T) {
	overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	cases := []struct {
		name     string
		script   [][]modeltest.Step
		wantErr  string
		wantReqs int
		sleeps   []time.Duration
	}{
		{"529 then success", [][]modeltest.Step{{modeltest.HTTPError(529, overloaded, "")}, {modeltest.Text("ok")}}, "", 2, []time.Duration{-time.Second}},
		{"429 with retry-after then success", [][]modeltest.Step{{modeltest.HTTPError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "3")}, {modeltest.Text("ok")}}, "", 2, []time.Duration{3 * time.Second}},
		{"overloaded event before any content is retried", [][]modeltest.Step{{modeltest.StreamError("Overloaded")}, {modeltest.Text("ok")}}, "", 2, []time.Duration{-time.Second}},
		{"error event after text is not retried", [][]modeltest.Step{{modeltest.Text("partial"), modeltest.StreamError("Overloaded")}, {modeltest.Text("never")}},
			"overloaded_error: Overloaded", 1, nil},
		{"an invalid request error is not retried", [][]modeltest.Step{{modeltest.HTTPError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`, "")}},
			"HTTP 400 Bad Request: messages: roles must alternate", 1, nil},
		{"529 exhausts retries", [][]modeltest.Step{{modeltest.HTTPError(529, overloaded, "")}, {modeltest.HTTPError(529, overloaded, "")}, {modeltest.HTTPError(529, overloaded, "")}},
			"HTTP 529: Overloaded (after 3 attempts)", 3, []time.Duration{-time.Second, -2 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t)
			for _, s := range tc.script {
				srv.Script(s...)
			}
			c, sl := anthropicClient(t, srv.URL(), nil)
			r, _, err := run(t, c, hello)
			if tc.wantErr == "" {
				if err != nil || r.Content != "ok" {
					t.Fatalf("Stream = %q, %v; want ok", r.Content, err)
				}
			} else {
				wantErr(t, err, model.CodeProvider, tc.wantErr)
			}
			if n := len(srv.Requests()); n != tc.wantReqs {
				t.Errorf("requests = %d, want %d", n, tc.wantReqs)
			}
			checkSleeps(t, sl.got(), tc.sleeps)
		})
	}
}

func TestAnthropicWebSearchSources(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("Let me search."), modeltest.Citation("https://go.dev/doc/go1.26", "Go 1.26 notes"),
		modeltest.Text("Go 1.26 ships ", "a new GC."), modeltest.Citation("https://go.dev/blog/go1.26", "blog"),
		modeltest.Citation("https://go.dev/doc/go1.26", "again"), modeltest.Text("See the blog."))
	c, _ := anthropicClient(t, srv.URL(), nil)
	req := hello
	req.HostedWebSearch = true
	r, _, err := streamAll(t, c, req)
	if err != nil {
		t.Fatal(err)
	}
	want := "Let me search.\n\nGo 1.26 ships a new GC.\n\nSee the blog.\n\nSources:\n- https://go.dev/doc/go1.26\n- https://go.dev/blog/go1.26"
	if d := cmp.Diff(want, r.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if !srv.Requests()[0].HasHostedWebSearch() {
		t.Error("web search not offered")
	}
}
