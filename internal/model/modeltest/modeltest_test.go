package modeltest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

func TestLoadScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	js := `[[{"text":["He","llo"]},{"usage":{"input":1,"output":2,"cache_read":5}},{"reasoning":["hm"]},{"stop_reason":"refusal"}],
	        [{"tool_call":{"id":"c1","name":"bash","arguments":["{\"command\":","\"ls\"}"]}}],
	        [{"http_error":{"status":429,"body":"slow","retry_after":"1"}}]]`
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := modeltest.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]modeltest.Step{
		{modeltest.Text("He", "llo"), modeltest.CachedUsage(1, 2, 5, 0), modeltest.Reasoning("hm"), modeltest.StopReason("refusal")},
		{modeltest.ToolCall("c1", "bash", `{"command":`, `"ls"}`)},
		{modeltest.HTTPError(429, "slow", "1")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("script (-want +got):\n%s", d)
	}
	if _, err := modeltest.LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadScript of a missing file succeeded")
	}
}

// events posts to path and returns the data lines of the stream.
func events(t *testing.T, url string) (int, []string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"tools":[{"type":"function","function":{"name":"bash"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return resp.StatusCode, data
}

func TestChatEncoding(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("a"), modeltest.ToolCall("c1", "bash", "{", "}"), modeltest.Usage(1, 2))
	status, got := events(t, srv.URL()+"/v1/chat/completions")
	want := []string{
		`{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"content":"a"},"finish_reason":null,"index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"","name":"bash"},"id":"c1","index":0,"type":"function"}]},"finish_reason":null,"index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{"},"index":0}]},"finish_reason":null,"index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"},"index":0}]},"finish_reason":null,"index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{},"finish_reason":"tool_calls","index":0}],"id":"chatcmpl-modeltest","model":"modeltest","object":"chat.completion.chunk"}`,
		`{"choices":[],"id":"chatcmpl-modeltest","object":"chat.completion.chunk","usage":{"completion_tokens":2,"prompt_tokens":1,"total_tokens":3}}`,
		`[DONE]`,
	}
	if status != 200 {
		t.Errorf("status = %d", status)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	rec := srv.Requests()[0]
	if d := cmp.Diff([]string{"bash"}, rec.ToolNames()); d != "" || rec.Wire() != "chat" {
		t.Errorf("ToolNames/Wire: %s %q", d, rec.Wire())
	}
}

func TestResponsesEventOrder(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("a"), modeltest.Citation("https://x.example", "X"), modeltest.ToolCall("c1", "bash", "{}"), modeltest.Usage(1, 2))
	_, got := events(t, srv.URL()+"/responses")
	want := []string{"response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.annotation.added", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.output_item.done", "response.completed"}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, d := range got {
		if !strings.Contains(d, `"type":"`+want[i]+`"`) {
			t.Errorf("event %d = %s, want type %s", i, d, want[i])
		}
	}
}

func TestUnscriptedAndUnknownPath(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("x"))
	if status, _ := events(t, srv.URL()+"/v1/embeddings"); status != http.StatusNotFound {
		t.Errorf("unknown path status = %d, want 404", status)
	}
	if status, _ := events(t, srv.URL()+"/responses"); status != http.StatusInternalServerError {
		t.Errorf("unscripted status = %d, want 500", status)
	}
	recs := srv.Requests()
	if len(recs) != 2 || recs[0].Unscripted || !recs[1].Unscripted || srv.Pending() != 0 {
		t.Errorf("records = %+v, pending = %d", recs, srv.Pending())
	}
}

// eventTypes posts to url and returns the "type" of each data payload.
func eventTypes(t *testing.T, url string) []string {
	t.Helper()
	_, data := events(t, url)
	var types []string
	for _, d := range data {
		var v struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		types = append(types, v.Type)
	}
	return types
}

func TestAnthropicEncoding(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Reasoning("th", "ink"), modeltest.Text("a"), modeltest.Citation("https://x.example", "X"), modeltest.Text("b"),
		modeltest.ToolCall("toolu_1", "bash", "{", "}"), modeltest.CachedUsage(1, 2, 3, 4))
	got := eventTypes(t, srv.URL()+"/v1/messages")
	want := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", // thinking + signature
		"content_block_start", "content_block_delta", "content_block_stop", // text a
		"content_block_start", "content_block_delta", "content_block_stop", "content_block_start", "content_block_stop", // search + result
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // citation + text b
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // tool_use
		"message_delta", "message_stop"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("event types (-want +got):\n%s", d)
	}
	_, data := events(t, srv.URL()+"/v1/messages") // unscripted: the error body
	if len(data) != 0 {
		t.Errorf("unscripted request streamed %v", data)
	}
	rec := srv.Requests()[0]
	if rec.Wire() != "anthropic" {
		t.Errorf("Wire() = %q", rec.Wire())
	}
}

func TestAnthropicEncodingStopAndErrors(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("x"), modeltest.StopReason("max_tokens"))
	srv.Script(modeltest.StreamError("Overloaded"))
	_, first := events(t, srv.URL()+"/v1/messages")
	if last := first[len(first)-2]; !strings.Contains(last, `"stop_reason":"max_tokens"`) {
		t.Errorf("message_delta = %s", last)
	}
	_, second := events(t, srv.URL()+"/v1/messages")
	if got := second[len(second)-1]; got != `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}` {
		t.Errorf("error event = %s", got)
	}
}

func TestReasoningAndStopOnOtherWires(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Reasoning("r1"), modeltest.Text("a"), modeltest.StopReason("length"), modeltest.CachedUsage(1, 2, 3, 0))
	srv.Script(modeltest.Reasoning("r1"), modeltest.Text("a"), modeltest.StopReason("max_output_tokens"))
	_, chat := events(t, srv.URL()+"/chat/completions")
	joined := strings.Join(chat, "\n")
	for _, want := range []string{`"reasoning_content":"r1"`, `"finish_reason":"length"`, `"prompt_tokens":4`, `"cached_tokens":3`} {
		if !strings.Contains(joined, want) {
			t.Errorf("chat stream lacks %s:\n%s", want, joined)
		}
	}
	resp := eventTypes(t, srv.URL()+"/responses")
	if !slices.Contains(resp, "response.reasoning_summary_text.delta") || resp[len(resp)-1] != "response.incomplete" {
		t.Errorf("responses events = %v", resp)
	}
}

// TestRespondIsStateless: a Respond function answers every request from
// its body, leaves the script queue alone and records nothing.
func TestRespondIsStateless(t *testing.T) {
	s := modeltest.New(t)
	var bodies []string
	s.Respond = func(path string, body []byte) []modeltest.Step {
		bodies = append(bodies, path+" "+string(body))
		return []modeltest.Step{modeltest.Text("echo:" + strings.TrimSuffix(path, "/chat/completions"))}
	}
	s.Script(modeltest.Text("queued"))
	for range 2 {
		status, data := events(t, s.URL()+"/v1/chat/completions")
		if status != http.StatusOK || !slices.ContainsFunc(data, func(d string) bool { return strings.Contains(d, `echo:/v1`) }) {
			t.Fatalf("status %d, stream %q: want the responder's text", status, data)
		}
	}
	if len(bodies) != 2 || !strings.HasPrefix(bodies[0], "/v1/chat/completions {") {
		t.Errorf("responder saw %q, want two bodies with their path", bodies)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests recorded, want none", n)
	}
	if s.Pending() != 1 {
		t.Errorf("the queued script was used: %d pending", s.Pending())
	}
}
