package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// anthropicConfig makes the built-in anthropic profile active at url.
func anthropicConfig(url string, extra ...string) string {
	return fmt.Sprintf("[provider]\nactive = \"anthropic\"\n\n[providers.anthropic]\nbase_url = %q\n", url) + strings.Join(extra, "\n") + "\n"
}

// anthropicInstance is an instance whose environment holds only an
// Anthropic key.
func anthropicInstance(t *testing.T, config string) (*instance, []string) {
	in := newInstance(t, config)
	return in, in.withEnv("OPENAI_API_KEY", "ANTHROPIC_API_KEY=sk-ant-test")
}

// content is the content blocks of message i of an Anthropic request.
func content(r modeltest.Recorded, i int) []map[string]any {
	msgs := r.Messages()
	if i >= len(msgs) {
		return nil
	}
	list, _ := msgs[i]["content"].([]any)
	var out []map[string]any
	for _, b := range list {
		if m, ok := b.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func blockTypes(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, fmt.Sprint(b["type"]))
	}
	return out
}

// The tool loop over wire_api = "anthropic" with extended thinking: the
// reasoning never reaches stdout, the signed thinking blocks go back with
// the tool results while the loop runs, and the key goes as x-api-key.
func TestExecAnthropicToolLoopWithThinking(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Reasoning("I will run ", "bash."), modeltest.ToolCall("toolu_1", "bash", `{"comm`, `and":"echo hi-from-bash"}`))
	fm.Script(modeltest.Reasoning("Now read."), modeltest.Text("Reading."), modeltest.ToolCall("toolu_2", "read", `{"path":"a.txt"}`))
	fm.Script(modeltest.Reasoning("Done."), modeltest.Text("All ", "done."), modeltest.CachedUsage(20, 5, 1000, 0))
	in, env := anthropicInstance(t, anthropicConfig(fm.URL(), `max_retries = 0`, `reasoning_effort = "low"`))
	r := in.runOK(env, "", "exec", "--yes", "run the loop")
	if diff := cmp.Diff("Reading.\nAll done.\n", r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	reqs := modelRequests(t, fm, 3)
	for i, req := range reqs {
		if req.Wire() != "anthropic" || req.Header.Get("X-Api-Key") != "sk-ant-test" || req.Header.Get("Anthropic-Version") != "2023-06-01" {
			t.Fatalf("request %d: %s with headers %v", i, req.Path, req.Header)
		}
		if th, _ := req.Body["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != float64(4096) {
			t.Errorf("request %d thinking = %v", i, req.Body["thinking"])
		}
	}
	// Request 3: user prompt, assistant(thinking, tool_use), user(tool_result),
	// assistant(thinking, text, tool_use), user(tool_result).
	third := reqs[2]
	if d := cmp.Diff([]string{"thinking", "tool_use"}, blockTypes(content(third, 1))); d != "" {
		t.Errorf("first assistant message (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"thinking", "text", "tool_use"}, blockTypes(content(third, 3))); d != "" {
		t.Errorf("second assistant message (-want +got):\n%s", d)
	}
	if b := content(third, 1)[0]; b["thinking"] != "I will run bash." || b["signature"] == "" || b["signature"] == nil {
		t.Errorf("thinking block sent back = %v", b)
	}
	if b := content(third, 2)[0]; b["type"] != "tool_result" || b["tool_use_id"] != "toolu_1" || !strings.Contains(fmt.Sprint(b["content"]), "hi-from-bash") {
		t.Errorf("tool result = %v", b)
	}
	if last := content(third, 4); last[len(last)-1]["cache_control"] == nil {
		t.Errorf("the last message carries no cache_control: %v", last)
	}
	// --json shows the reasoning as its own event.
	fm.Script(modeltest.Reasoning("Thinking aloud."), modeltest.Text("Hi."))
	r = in.run(env, "", "exec", "--json", "say hi")
	var reasoning, answer string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		switch ev.Type {
		case "assistant.reasoning":
			reasoning += ev.Content
		case "assistant.completed":
			answer = ev.Content
		}
	}
	if r.code != 0 || reasoning != "Thinking aloud." || answer != "Hi." {
		t.Errorf("--json: exit %d, reasoning %q, answer %q\n%s", r.code, reasoning, answer, r.stdout)
	}
	// The finished turn's thinking is not sent with the next turn.
	if raw := string(fm.Requests()[3].Raw); strings.Contains(raw, `"type":"thinking"`) {
		t.Errorf("a later turn replays thinking blocks: %s", raw)
	}
}

func TestExecAnthropicOverloadedThenSuccess(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.HTTPError(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "0.01"))
	fm.Script(modeltest.Text("Fine."))
	in, env := anthropicInstance(t, anthropicConfig(fm.URL(), `max_retries = 1`))
	r := in.run(env, "", "exec", "hi")
	if r.code != 0 || r.stdout != "Fine.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(fm.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2 (one retry after 529)", n)
	}
}

func TestExecAnthropicErrorEventMidStream(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("Partial "), modeltest.StreamError("Overloaded"))
	fm.Script(modeltest.Text("never"))
	in, env := anthropicInstance(t, anthropicConfig(fm.URL(), `max_retries = 2`))
	r := in.run(env, "", "exec", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "turn failed (provider_error): overloaded_error: Overloaded") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("requests = %d, want 1: nothing is retried once text streamed", n)
	}
}

func TestExecAnthropicHostedSearch(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("Let me search."), modeltest.Citation("https://go.dev/doc/go1.26", "Go 1.26 notes"),
		modeltest.Text("Go 1.26 is out."), modeltest.Usage(10, 3))
	in, env := anthropicInstance(t, anthropicConfig(fm.URL(), `max_retries = 0`, "\n[web]\nsearch = \"provider\""))
	r := in.runOK(env, "", "exec", "what is new in Go?")
	want := "Let me search.\n\nGo 1.26 is out.\n\nSources:\n- https://go.dev/doc/go1.26\n"
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	req := fm.Requests()[0]
	if !req.HasHostedWebSearch() {
		t.Errorf("web search not offered: %s", req.Raw)
	}
	if names := req.ToolNames(); len(names) == 0 || strings.Contains(strings.Join(names, ","), "web_search") {
		t.Errorf("function tools = %v", names)
	}
}
