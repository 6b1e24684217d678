package model_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// bigStream frames text deltas (or, with call, argument deltas) the way
// each wire's servers do, including the final events that repeat the
// content on the Responses wire. Quotes are the only characters of frags
// escaped.
func bigStream(wire string, frags []string, call bool) string {
	var b strings.Builder
	all := strings.Join(frags, "")
	ev := func(name, data string) {
		if name != "" {
			b.WriteString("event: " + name + "\n")
		}
		b.WriteString("data: " + data + "\n\n")
	}
	switch wire {
	case model.WireResponses:
		if call {
			ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_0123456789abcdef","call_id":"call_big","name":"write","arguments":"","status":"in_progress"}}`)
		}
		for i, f := range frags {
			typ := "response.output_text.delta"
			if call {
				typ = "response.function_call_arguments.delta"
			}
			ev(typ, `{"type":"`+typ+`","sequence_number":`+itoa(i+2)+`,"item_id":"msg_0123456789abcdef0123456789abcdef","output_index":0,"content_index":0,"delta":"`+strings.ReplaceAll(f, `"`, `\"`)+`","logprobs":[],"obfuscation":"Xy1z"}`)
		}
		item := `{"type":"message","id":"msg_0123456789abcdef0123456789abcdef","role":"assistant","content":[{"type":"output_text","text":"` + all + `","annotations":[]}]}`
		if call {
			item = `{"type":"function_call","id":"fc_0123456789abcdef","call_id":"call_big","name":"write","arguments":"` + strings.ReplaceAll(all, `"`, `\"`) + `"}`
		}
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item+`}`)
		ev("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[`+item+`]}}`)
	case model.WireChat:
		for i, f := range frags {
			d := `"content":"` + f + `"`
			if call {
				d = `"tool_calls":[{"index":0,"function":{"arguments":"` + strings.ReplaceAll(f, `"`, `\"`) + `"}}]`
				if i == 0 {
					d = `"tool_calls":[{"index":0,"id":"call_big","type":"function","function":{"name":"write","arguments":"` + strings.ReplaceAll(f, `"`, `\"`) + `"}}]`
				}
			}
			ev("", `{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1770000000,"model":"big-model","choices":[{"index":0,"delta":{`+d+`},"finish_reason":null}]}`)
		}
		ev("", `{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		ev("", "[DONE]")
	case model.WireAnthropic:
		ev("message_start", `{"type":"message_start","message":{"id":"msg_01big","type":"message","role":"assistant","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}`)
		block, delta := `{"type":"text","text":""}`, "text_delta"
		if call {
			block, delta = `{"type":"tool_use","id":"toolu_big","name":"write","input":{}}`, "input_json_delta"
		}
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+block+`}`)
		for _, f := range frags {
			field := `"text":"` + f + `"`
			if call {
				field = `"partial_json":"` + strings.ReplaceAll(f, `"`, `\"`) + `"`
			}
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"`+delta+`",`+field+`}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":300000}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// Under the default limits a 1 MiB answer and a 256 KiB tool argument go
// through on every wire, although their framing is several times the
// 4 MiB of max_response_bytes: that limit counts content, not framing.
func TestLargeAnswerAndArgumentUnderDefaults(t *testing.T) {
	answer := strings.Repeat("word ", 1<<20/5) + strings.Repeat("!", 1<<20%5)
	args := `{"content":"` + strings.Repeat("a", 256<<10-len(`{"content":""}`)) + `"}`
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name string
				body string
			}{
				{"1 MiB answer", bigStream(wire, split(answer, 32), false)},
				{"256 KiB argument", bigStream(wire, split(args, 8), true)},
			} {
				if len(tc.body) <= model.DefaultLimits.MaxResponseBytes {
					t.Fatalf("%s: the stream is only %d bytes: it does not show framing beyond max_response_bytes", tc.name, len(tc.body))
				}
				hc := &http.Client{Transport: replayTransport{body: []byte(tc.body)}}
				c, _ := newClient(t, wire, "http://provider.invalid", func(o *model.Options) { o.MaxRetries = 0; o.HTTPClient = hc })
				r, _, err := run(t, c, hello)
				switch {
				case err != nil:
					t.Fatalf("%s (%d bytes of stream): %v", tc.name, len(tc.body), err)
				case tc.name == "1 MiB answer" && r.Content != answer:
					t.Fatalf("%s: content %d bytes", tc.name, len(r.Content))
				case tc.name != "1 MiB answer" && (len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != args):
					t.Fatalf("%s: %d calls", tc.name, len(r.ToolCalls))
				}
			}
		})
	}
}

// The limits that remain: content beyond max_response_bytes, framing
// beyond FramingAllowance times it, and an event beyond
// max_sse_event_bytes that repeats nothing.
func TestContentAndFramingLimits(t *testing.T) {
	t.Run("framing of ignored events", func(t *testing.T) {
		ping := "event: ping\ndata: {\"type\":\"ping\"}\n\n"
		body := strings.Repeat(ping, 70000/len(ping)+1)
		c, _ := newClient(t, model.WireAnthropic, rawServer(t, body), func(o *model.Options) {
			o.MaxRetries = 0
			o.Limits = model.Limits{MaxResponseBytes: 1000, MaxSSEEventBytes: 1000}
		})
		_, _, err := run(t, c, hello)
		wantErr(t, err, model.CodeResponse, "the stream exceeded 64000 bytes (64 × provider_limits.max_response_bytes, framing included)")
	})
	for _, wire := range wires {
		t.Run(wire+"/final events may repeat the content", func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text(split(strings.Repeat("z", 20000), 100)...))
			c, _ := newClient(t, wire, srv.URL(), func(o *model.Options) { o.Limits.MaxSSEEventBytes = 4096 })
			if r, _, err := run(t, c, hello); err != nil || len(r.Content) != 20000 {
				t.Fatalf("content %d bytes, err %v", len(r.Content), err)
			}
		})
		t.Run(wire+"/reasoning counts as content", func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Reasoning(split(strings.Repeat("r", 3000), 100)...), modeltest.Text("ok"))
			c, _ := newClient(t, wire, srv.URL(), func(o *model.Options) { o.Limits.MaxResponseBytes = 2000 })
			_, _, err := run(t, c, hello)
			wantErr(t, err, model.CodeResponse, "the response content exceeded provider_limits.max_response_bytes (2000)")
		})
	}
}
