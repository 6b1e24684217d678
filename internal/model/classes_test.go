package model_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model"
)

// sse frames data payloads as one event each.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

// stream streams req and returns the response, the answer and reasoning
// deltas joined, and the error.
func stream(t *testing.T, c model.Client, req model.Request) (r model.Response, text, reasoning string, err error) {
	t.Helper()
	var tb, rb strings.Builder
	r, err = c.Stream(t.Context(), req, func(d model.Delta) {
		if d.Kind == model.DeltaReasoning {
			rb.WriteString(d.Text)
		} else {
			tb.WriteString(d.Text)
		}
	})
	return r, tb.String(), rb.String(), err
}

// streamAll streams req and returns the response, the reasoning text and
// the error; it checks that the answer deltas add up to the content.
func streamAll(t *testing.T, c model.Client, req model.Request) (model.Response, string, error) {
	t.Helper()
	r, text, reasoning, err := stream(t, c, req)
	if err == nil && text != r.Content {
		t.Errorf("answer deltas %q do not add up to the content %q", text, r.Content)
	}
	return r, reasoning, err
}

const completed = `{"type":"response.completed","response":{"status":"completed"}}`

type trafficCase struct {
	name, wire, body string
	want             model.Response
	reasoning        string
	wantErr          string
}

// trafficCases are the classes of real traffic the parsers must accept,
// each with the smallest stream that shows it.
func trafficCases() []trafficCase {
	call := func(id, name, args string) model.ToolCall { return model.ToolCall{ID: id, Name: name, Arguments: args} }
	return []trafficCase{
		{
			name: "1 unknown event with an object delta", wire: model.WireResponses,
			body: sse(`{"type":"response.shell_call_output_content.delta","output_index":0,"delta":{"stdout":"total 0\n"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"bash","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"{}"}`, completed),
			want: model.Response{ToolCalls: []model.ToolCall{call("c1", "bash", "{}")}},
		},
		{
			name: "1 unused item whose arguments are an object", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.added","output_index":0,"item":{"type":"tool_search_call","id":"ts_1","arguments":{}}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"tool_search_call","id":"ts_1","arguments":{},"status":"completed"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"read","arguments":""}}`,
				`{"type":"response.function_call_arguments.done","output_index":1,"item_id":"fc_1","arguments":"{\"path\":\"a\"}"}`, completed),
			want: model.Response{ToolCalls: []model.ToolCall{call("c1", "read", `{"path":"a"}`)}},
		},
		{
			name: "1 known event with an odd field", wire: model.WireResponses,
			body: sse(`{"type":"response.output_text.delta","output_index":0,"delta":"hi","logprobs":{"odd":true},"content_index":"0"}`, completed),
			want: model.Response{Content: "hi"},
		},
		{
			name: "2 chat content as an array of parts", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Add them."}]}]}}]}`,
				`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"2 + 2 = 4"}]},"finish_reason":"stop"}]}`, `[DONE]`),
			want: model.Response{Content: "2 + 2 = 4"}, reasoning: "Add them.",
		},
		{
			name: "3 item ids rotate: two calls keyed by output_index, no duplicates", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_a1","call_id":"call_A","name":"read","arguments":""}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_b1","call_id":"call_B","name":"bash","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_a2","delta":"{\"path\":"}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_b2","delta":"{\"command\":"}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_a3","delta":"\"a.txt\"}"}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_b3","delta":"\"ls\"}"}`,
				`{"type":"response.function_call_arguments.done","output_index":0,"item_id":"fc_a4","arguments":"{\"path\":\"a.txt\"}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_a5","call_id":"call_A","name":"read","arguments":"{\"path\":\"a.txt\"}"}}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_b5","call_id":"call_B","name":"bash","arguments":"{\"command\":\"ls\"}"}}`,
				`{"type":"response.completed","response":{"output":[{"type":"function_call","id":"fc_a6","call_id":"call_A","name":"read","arguments":"{\"path\":\"a.txt\"}"},{"type":"function_call","id":"fc_b6","call_id":"call_B","name":"bash","arguments":"{\"command\":\"ls\"}"}]}}`),
			want: model.Response{ToolCalls: []model.ToolCall{call("call_A", "read", `{"path":"a.txt"}`), call("call_B", "bash", `{"command":"ls"}`)}},
		},
		{
			name: "3 a call_id seen before is never added again", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"bash","arguments":"{}"}}`,
				`{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_2","call_id":"c1","name":"bash","arguments":"{}"}}`,
				`{"type":"response.completed","response":{"output":[{"type":"function_call","id":"fc_3","call_id":"c1","name":"bash","arguments":"{}"}]}}`),
			want: model.Response{ToolCalls: []model.ToolCall{call("c1", "bash", "{}")}},
		},
		{
			name: "4 chat calls without index: two in one chunk", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"gSIMJiOkT","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"id":"hT2kLm9Qp","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			want: model.Response{ToolCalls: []model.ToolCall{call("gSIMJiOkT", "read", `{"path":"a"}`), call("hT2kLm9Qp", "bash", `{"command":"ls"}`)}},
		},
		{
			name: "4 chat calls without index continue until a new id", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a1","function":{"name":"read","arguments":"{\"pa"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"th\":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b2","function":{"name":"list","arguments":""}}]},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			want: model.Response{ToolCalls: []model.ToolCall{call("a1", "read", `{"path":1}`), call("b2", "list", `{}`)}},
		},
		{
			name: "4 chat: a new id at the same index is a new call", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","function":{"name":"a","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x2","function":{"name":"b","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			want: model.Response{ToolCalls: []model.ToolCall{call("x1", "a", `{}`), call("x2", "b", `{}`)}},
		},
		{
			name: "5 responses refusal deltas are the answer", wire: model.WireResponses,
			body: sse(`{"type":"response.refusal.delta","output_index":0,"item_id":"m1","delta":"I can't help "}`,
				`{"type":"response.refusal.delta","output_index":0,"item_id":"m1","delta":"with that."}`, completed),
			want: model.Response{Content: "I can't help with that."},
		},
		{
			name: "5 responses refusal part only in the final item", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","content":[{"type":"refusal","refusal":"No."}]}}`, completed),
			want: model.Response{Content: "No."},
		},
		{
			name: "6 separate message items are set off by a blank line", wire: model.WireResponses,
			body: sse(`{"type":"response.output_text.delta","output_index":0,"item_id":"m0","delta":"Got it"}`,
				`{"type":"response.output_text.delta","output_index":2,"item_id":"m2","delta":"Here are a few"}`,
				`{"type":"response.output_text.delta","output_index":2,"item_id":"m2","content_index":1,"delta":" items."}`, completed),
			want: model.Response{Content: "Got it\n\nHere are a few items."},
		},
		{
			name: "6 anthropic text blocks: adjacent joined as-is, separated by a server tool with a blank line", wire: model.WireAnthropic,
			body: sse(`{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me search."}}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}}`,
				`{"type":"content_block_start","index":3,"content_block":{"type":"text","text":"Paris is "}}`,
				`{"type":"content_block_start","index":4,"content_block":{"type":"text","text":"","citations":[]}}`,
				`{"type":"content_block_delta","index":4,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://e.example/paris"}}}`,
				`{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"the capital"}}`,
				`{"type":"content_block_start","index":5,"content_block":{"type":"text","text":"."}}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}`, `{"type":"message_stop"}`),
			want: model.Response{Content: "Let me search.\n\nParis is the capital.\n\nSources:\n- https://e.example/paris",
				Usage: &model.Usage{InputTokens: 5, OutputTokens: 9, TotalTokens: 14}},
		},
		{
			name: "7 text only in response.output_item.done", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"fixture hello"}]}}`,
				`{"type":"response.completed","response":{"output":[]}}`),
			want: model.Response{Content: "fixture hello"},
		},
		{
			name: "7 text only in response.completed, once", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","content":[]}}`,
				`{"type":"response.completed","response":{"output":[{"type":"message","id":"m1","content":[{"type":"output_text","text":"Final."}]},{"type":"message","id":"m2","content":[{"type":"output_text","text":"More."}]}]}}`),
			want: model.Response{Content: "Final.\n\nMore."},
		},
		{
			name: "responses reasoning is never the answer", wire: model.WireResponses,
			body: sse(`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Think."}`,
				`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Again."}`,
				`{"type":"response.output_text.delta","output_index":1,"delta":"Answer."}`,
				`{"type":"response.completed","response":{"output":[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"Think."}]}],"usage":{"input_tokens":3,"output_tokens":4,"input_tokens_details":{"cached_tokens":2}}}}`),
			want: model.Response{Content: "Answer.", Usage: &model.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7, CacheReadTokens: 2}}, reasoning: "Think.\n\nAgain.",
		},
		{
			name: "chat reasoning_content and reasoning are never the answer", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"reasoning_content":"Hmm. "}}]}`, `{"choices":[{"index":0,"delta":{"reasoning":"Yes."}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"Four."},"finish_reason":"stop"}]}`, `[DONE]`),
			want: model.Response{Content: "Four."}, reasoning: "Hmm. Yes.",
		},
		{
			name: "chat only reasoning is an empty answer", wire: model.WireChat,
			body:    sse(`{"choices":[{"index":0,"delta":{"reasoning_content":"[tool_call]"},"finish_reason":"stop"}]}`, `[DONE]`),
			wantErr: "empty answer (it produced only reasoning)",
		},
		{
			name: "responses: only a hosted tool SCV does not offer", wire: model.WireResponses,
			body: sse(`{"type":"response.output_item.added","output_index":0,"item":{"type":"shell_call","id":"sh_1","action":{"commands":["ls"]}}}`,
				`{"type":"response.shell_call_command.delta","output_index":0,"delta":"ls"}`, completed),
			wantErr: "empty answer (its only output was shell_call, which SCV does not offer or use)",
		},
		{
			name: "chat finish_reason length fails", wire: model.WireChat,
			body:    sse(`{"choices":[{"index":0,"delta":{"content":"The answer is"},"finish_reason":"length"}]}`, `[DONE]`),
			wantErr: `finish_reason "length"`,
		},
		{
			name: "chat: only the first choice is the answer", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"B"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}}`, `[DONE]`),
			want: model.Response{Content: "A", Usage: &model.Usage{InputTokens: 2, OutputTokens: 1, TotalTokens: 3, CacheReadTokens: 1}},
		},
		{
			name: "chat arguments sent as an object are kept as JSON text", wire: model.WireChat,
			body: sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":{"path":"a"}}}]},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			want: model.Response{ToolCalls: []model.ToolCall{call("c1", "read", `{"path":"a"}`)}},
		},
	}
}

func TestTrafficClasses(t *testing.T) {
	for _, tc := range trafficCases() {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, tc.wire, rawServer(t, tc.body), func(o *model.Options) { o.MaxRetries = 0 })
			r, reasoning, err := streamAll(t, c, hello)
			if !wantResponse(t, r, err, tc.want, tc.wantErr) {
				return
			}
			if reasoning != tc.reasoning {
				t.Errorf("reasoning = %q, want %q", reasoning, tc.reasoning)
			}
		})
	}
}
