package model_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scv-agent/scv/internal/model"
)

// rawServer answers every request with body as an event stream.
func rawServer(t *testing.T, body string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestRawStreams(t *testing.T) {
	cases := []struct {
		name, wire, body string
		want             model.Response
		wantErr          string
	}{
		{
			name: "responses: output only in response.completed", wire: model.WireResponses,
			body: `data: {"type":"response.created","response":{}}` + "\n\n" +
				`data: {"type":"response.some_future_event","x":1}` + "\n\n" +
				`data: {"type":"response.completed","response":{"status":"completed","output":[` +
				`{"type":"reasoning","id":"rs_1"},` +
				`{"type":"message","id":"m1","content":[{"type":"output_text","text":"Answer.","annotations":[{"type":"url_citation","url":"https://e.example/"}]}]},` +
				`{"type":"function_call","id":"fc_1","call_id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}],` +
				`"usage":{"input_tokens":4,"output_tokens":6}}}` + "\n\n",
			want: model.Response{Content: "Answer.\n\nSources:\n- https://e.example/", ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}, Usage: &model.Usage{InputTokens: 4, OutputTokens: 6, TotalTokens: 10}},
		},
		{
			name: "responses: event name from the event field", wire: model.WireResponses,
			body: "event: response.output_text.delta\ndata: {\"delta\":\"hi\"}\n\nevent: response.completed\ndata: {\"response\":{}}\n\n",
			want: model.Response{Content: "hi"},
		},
		{
			name: "responses: incomplete", wire: model.WireResponses,
			body:    `data: {"type":"response.output_text.delta","delta":"hi"}` + "\n\n" + `data: {"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}` + "\n\n",
			wantErr: "the response is incomplete: max_output_tokens",
		},
		{
			name: "responses: nested error object", wire: model.WireResponses,
			body:    `data: {"type":"error","error":{"type":"invalid_request_error","message":"context too long"}}` + "\n\n",
			wantErr: "context too long",
		},
		{
			name: "responses: malformed event", wire: model.WireResponses,
			body:    "data: {not json\n\n",
			wantErr: "malformed stream event",
		},
		{
			name: "chat: finish without [DONE], call without id", wire: model.WireChat,
			body: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"b","arguments":"{}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"a","arguments":"{\"k\""}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n",
			want: model.Response{ToolCalls: []model.ToolCall{{ID: "x", Name: "a", Arguments: `{"k":1}`}, {ID: "call_1", Name: "b", Arguments: `{}`}}},
		},
		{
			name: "chat: no finish and no [DONE]", wire: model.WireChat,
			body:    `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n",
			wantErr: "stream ended before the response completed",
		},
		{
			name: "chat: refusal is the answer", wire: model.WireChat,
			body: `data: {"choices":[{"index":0,"delta":{"content":null,"refusal":"I can't"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"refusal":" help."},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n",
			want: model.Response{Content: "I can't help."},
		},
		{
			name: "chat: error chunk", wire: model.WireChat,
			body:    `data: {"error":{"message":"overloaded"}}` + "\n\n",
			wantErr: "overloaded",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, tc.wire, rawServer(t, tc.body), func(o *model.Options) { o.MaxRetries = 0 })
			r, _, err := run(t, c, hello)
			wantResponse(t, r, err, tc.want, tc.wantErr)
		})
	}
}
