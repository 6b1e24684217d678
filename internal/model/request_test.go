package model_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

var history = model.Request{
	Instructions: "You are careful.",
	Messages: []model.Message{
		{Role: model.User, Content: "list files"},
		{Role: model.Assistant, Content: "Looking.", ToolCalls: []model.ToolCall{
			{ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`},
			{ID: "call_2", Name: "read", Arguments: ``},
		}},
		{Role: model.ToolRole, ToolCallID: "call_1", Name: "bash", Content: "a.txt"},
		{Role: model.ToolRole, ToolCallID: "call_2", Name: "read", Content: "hello"},
		{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "call_3", Name: "bash", Arguments: `{}`}}},
		{Role: model.ToolRole, ToolCallID: "call_3", Name: "bash", Content: "ok"},
		{Role: model.Assistant, Content: "Done."},
		{Role: model.User, Content: "thanks"},
	},
	Tools: []model.ToolSpec{
		{Name: "bash", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
		{Name: "list", Description: "List."},
	},
}

// firstRequest is the first request srv received; it checks the body is
// want and that the conversation's tools (bash, list) were offered.
func firstRequest(t *testing.T, srv *modeltest.Server, want any) modeltest.Recorded {
	t.Helper()
	rec := srv.Requests()[0]
	if d := cmp.Diff(want, any(rec.Body)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"bash", "list"}, rec.ToolNames()); d != "" {
		t.Errorf("ToolNames (-want +got):\n%s", d)
	}
	return rec
}

func TestResponsesRequestShape(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	c, _ := newClient(t, model.WireResponses, srv.URL(), func(o *model.Options) { o.ReasoningEffort = "low" })
	if _, _, err := run(t, c, history); err != nil {
		t.Fatal(err)
	}
	want := decode(t, `{
		"model": "m1", "stream": true, "store": false,
		"instructions": "You are careful.",
		"reasoning": {"effort": "low"},
		"input": [
			{"type": "message", "role": "user", "content": "list files"},
			{"type": "message", "role": "assistant", "content": "Looking."},
			{"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"},
			{"type": "function_call", "call_id": "call_2", "name": "read", "arguments": "{}"},
			{"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
			{"type": "function_call_output", "call_id": "call_2", "output": "hello"},
			{"type": "function_call", "call_id": "call_3", "name": "bash", "arguments": "{}"},
			{"type": "function_call_output", "call_id": "call_3", "output": "ok"},
			{"type": "message", "role": "assistant", "content": "Done."},
			{"type": "message", "role": "user", "content": "thanks"}
		],
		"tools": [
			{"type": "function", "name": "bash", "description": "Run a command.", "strict": false,
			 "parameters": {"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},
			{"type": "function", "name": "list", "description": "List.", "strict": false,
			 "parameters": {"type":"object","properties":{}}}
		]
	}`)
	rec := firstRequest(t, srv, want)
	if rec.HasHostedWebSearch() || len(rec.InputItems()) != 10 || rec.Wire() != "responses" {
		t.Errorf("helpers: web_search=%v items=%d wire=%q", rec.HasHostedWebSearch(), len(rec.InputItems()), rec.Wire())
	}
}

func TestChatRequestShape(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	c, _ := newClient(t, model.WireChat, srv.URL(), nil)
	req := history
	req.Model, req.ReasoningEffort, req.HostedWebSearch = "m2", "high", true
	if _, _, err := run(t, c, req); err != nil {
		t.Fatal(err)
	}
	want := decode(t, `{
		"model": "m2", "stream": true, "stream_options": {"include_usage": true},
		"reasoning_effort": "high",
		"messages": [
			{"role": "system", "content": "You are careful."},
			{"role": "user", "content": "list files"},
			{"role": "assistant", "content": "Looking.", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
			{"role": "tool", "tool_call_id": "call_2", "content": "hello"},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_3", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_3", "content": "ok"},
			{"role": "assistant", "content": "Done."},
			{"role": "user", "content": "thanks"}
		],
		"tools": [
			{"type": "function", "function": {"name": "bash", "description": "Run a command.",
			 "parameters": {"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},
			{"type": "function", "function": {"name": "list", "description": "List.",
			 "parameters": {"type":"object","properties":{}}}}
		]
	}`)
	rec := firstRequest(t, srv, want)
	if rec.HasHostedWebSearch() || len(rec.Messages()) != 9 {
		t.Errorf("chat request offered web_search or lost messages: %s", rec.Raw)
	}
}

func TestHostedWebSearchOnlyWhenRequested(t *testing.T) {
	for _, on := range []bool{false, true} {
		srv := modeltest.New(t)
		srv.Script(modeltest.Text("ok"))
		c, _ := newClient(t, model.WireResponses, srv.URL(), nil)
		req := hello
		req.HostedWebSearch = on
		if _, _, err := run(t, c, req); err != nil {
			t.Fatal(err)
		}
		rec := srv.Requests()[0]
		if got := rec.HasHostedWebSearch(); got != on {
			t.Errorf("HostedWebSearch=%v: web_search offered = %v (%s)", on, got, rec.Raw)
		}
		if on {
			if d := cmp.Diff(decode(t, `[{"type":"web_search"}]`), rec.Body["tools"]); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
		}
	}
}

func TestSources(t *testing.T) {
	cases := []struct {
		name  string
		steps []modeltest.Step
		want  string
	}{
		{"appended, deduped, in citation order", []modeltest.Step{
			modeltest.Text("Go 1.26 is out"),
			modeltest.Citation("https://go.dev/blog/go1.26", "Go 1.26"),
			modeltest.Text(" and see the notes."),
			modeltest.Citation("https://go.dev/doc/go1.26", "Notes"),
			modeltest.Citation("https://go.dev/blog/go1.26", "Go 1.26"),
		}, "Go 1.26 is out and see the notes.\n\nSources:\n- https://go.dev/blog/go1.26\n- https://go.dev/doc/go1.26"},
		{"URL already in the answer is skipped", []modeltest.Step{
			modeltest.Text("See [notes](https://go.dev/doc/go1.26)."),
			modeltest.Citation("https://go.dev/doc/go1.26", "Notes"),
			modeltest.Citation("https://pkg.go.dev/std", "std"),
		}, "See [notes](https://go.dev/doc/go1.26).\n\nSources:\n- https://pkg.go.dev/std"},
		{"all URLs present: no list", []modeltest.Step{
			modeltest.Text("https://a.example/x"),
			modeltest.Citation("https://a.example/x", "A"),
		}, "https://a.example/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(tc.steps...)
			c, _ := newClient(t, model.WireResponses, srv.URL(), nil)
			req := hello
			req.HostedWebSearch = true
			r, deltas, err := run(t, c, req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, r.Content); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
			joined := ""
			for _, d := range deltas {
				joined += d
			}
			if joined != r.Content {
				t.Errorf("deltas %q do not add up to the content %q", joined, r.Content)
			}
		})
	}
}
