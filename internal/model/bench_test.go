package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchTarget is the size of the generated benchmark streams.
const benchTarget = 10 << 20

// benchText is the answer text the streams carry, cut into token-sized
// deltas of 1 to 12 bytes (real streams send one token per event).
func benchDeltas(n int) []string {
	words := strings.Fields("the model streams its answer one token at a time and the client must keep up with every event of it , including punctuation ; code like fmt.Println ( x ) and long identifiers such as parseResponsesStream")
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		w := words[(i*7)%len(words)]
		if i%3 != 0 {
			w = " " + w
		}
		out = append(out, w)
	}
	return out
}

// stream10MB builds about 10 MB of one wire's events, shaped like the
// recorded streams of testdata/provider-streams: reasoning deltas, text
// deltas, one tool call in argument deltas, and the final events. It
// returns the body and the number of events in it.
func stream10MB(wire string) ([]byte, int) {
	var b bytes.Buffer
	events := 0
	ev := func(name string, v any) {
		j, _ := json.Marshal(v)
		if name != "" {
			fmt.Fprintf(&b, "event: %s\n", name)
		}
		fmt.Fprintf(&b, "data: %s\n\n", j)
		events++
	}
	type o = map[string]any
	seq := 0
	resp := func(typ string, f o) {
		f["type"], f["sequence_number"] = typ, seq
		seq++
		ev(typ, f)
	}
	chunk := func(delta o) {
		ev("", o{"id": "chatcmpl-bench0123456789", "object": "chat.completion.chunk", "created": 1770000000, "model": "bench-model",
			"system_fingerprint": "fp_0123456789", "choices": []any{o{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": nil}}})
	}
	ant := func(typ string, f o) {
		f["type"] = typ
		ev(typ, f)
	}
	deltas := benchDeltas(benchTarget / 150)
	switch wire {
	case WireResponses:
		resp("response.created", o{"response": o{"id": "resp_bench", "status": "in_progress", "output": []any{}}})
		resp("response.output_item.added", o{"output_index": 0, "item": o{"type": "reasoning", "id": "rs_bench", "summary": []any{}}})
		for _, d := range deltas[:len(deltas)/10] {
			resp("response.reasoning_summary_text.delta", o{"item_id": "rs_bench", "output_index": 0, "summary_index": 0, "delta": d, "obfuscation": "Xy1z"})
		}
		resp("response.output_item.added", o{"output_index": 1, "item": o{"type": "message", "id": "msg_bench", "role": "assistant", "content": []any{}}})
		for b.Len() < benchTarget-(64<<10) {
			for _, d := range deltas[len(deltas)/10 : len(deltas)/10+64] {
				resp("response.output_text.delta", o{"item_id": "msg_bench", "output_index": 1, "content_index": 0, "delta": d, "logprobs": []any{}, "obfuscation": "Ab3"})
			}
		}
		resp("response.output_item.added", o{"output_index": 2, "item": o{"type": "function_call", "id": "fc_bench", "call_id": "call_bench", "name": "bash", "arguments": ""}})
		for _, f := range []string{`{"com`, `mand":`, `"go test`, ` ./..."}`} {
			resp("response.function_call_arguments.delta", o{"item_id": "fc_bench", "output_index": 2, "delta": f})
		}
		resp("response.completed", o{"response": o{"id": "resp_bench", "status": "completed", "output": []any{},
			"usage": o{"input_tokens": 100, "output_tokens": 200000, "total_tokens": 200100}}})
	case WireChat:
		chunk(o{"role": "assistant", "content": ""})
		for _, d := range deltas[:len(deltas)/10] {
			chunk(o{"reasoning_content": d})
		}
		for b.Len() < benchTarget-(64<<10) {
			for _, d := range deltas[len(deltas)/10 : len(deltas)/10+64] {
				chunk(o{"content": d})
			}
		}
		chunk(o{"tool_calls": []any{o{"index": 0, "id": "call_bench", "type": "function", "function": o{"name": "bash", "arguments": ""}}}})
		for _, f := range []string{`{"com`, `mand":`, `"go test`, ` ./..."}`} {
			chunk(o{"tool_calls": []any{o{"index": 0, "function": o{"arguments": f}}}})
		}
		ev("", o{"id": "chatcmpl-bench0123456789", "object": "chat.completion.chunk", "choices": []any{o{"index": 0, "delta": o{}, "finish_reason": "tool_calls"}},
			"usage": o{"prompt_tokens": 100, "completion_tokens": 200000, "total_tokens": 200100}})
		b.WriteString("data: [DONE]\n\n")
		events++
	case WireAnthropic:
		ant("message_start", o{"message": o{"id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench", "content": []any{},
			"stop_reason": nil, "usage": o{"input_tokens": 100, "cache_read_input_tokens": 0, "output_tokens": 1}}})
		ant("content_block_start", o{"index": 0, "content_block": o{"type": "thinking", "thinking": "", "signature": ""}})
		for _, d := range deltas[:len(deltas)/10] {
			ant("content_block_delta", o{"index": 0, "delta": o{"type": "thinking_delta", "thinking": d}})
		}
		ant("content_block_delta", o{"index": 0, "delta": o{"type": "signature_delta", "signature": strings.Repeat("S", 400)}})
		ant("content_block_stop", o{"index": 0})
		ant("content_block_start", o{"index": 1, "content_block": o{"type": "text", "text": ""}})
		for b.Len() < benchTarget-(64<<10) {
			for _, d := range deltas[len(deltas)/10 : len(deltas)/10+64] {
				ant("content_block_delta", o{"index": 1, "delta": o{"type": "text_delta", "text": d}})
			}
		}
		ant("content_block_stop", o{"index": 1})
		ant("content_block_start", o{"index": 2, "content_block": o{"type": "tool_use", "id": "toolu_bench", "name": "bash", "input": o{}}})
		for _, f := range []string{`{"com`, `mand":`, `"go test`, ` ./..."}`} {
			ant("content_block_delta", o{"index": 2, "delta": o{"type": "input_json_delta", "partial_json": f}})
		}
		ant("content_block_stop", o{"index": 2})
		ant("message_delta", o{"delta": o{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": o{"output_tokens": 200000}})
		ant("message_stop", o{})
	}
	return b.Bytes(), events
}

// reportPerEvent adds events/op and the CPU time per event (user +
// system, GC included) since cpu, over n iterations.
func reportPerEvent(b *testing.B, events int, cpu int64, n int) {
	b.ReportMetric(float64(events), "events/op")
	if used := cpuNanos() - cpu; used > 0 && n > 0 {
		b.ReportMetric(float64(used)/float64(n*events), "cpu-ns/event")
	}
}

func benchParser(wire string, l Limits) eventParser {
	switch wire {
	case WireChat:
		return newChatParser(l, nil)
	case WireAnthropic:
		return newAnthropicParser(l, nil)
	}
	return newResponsesParser(l, nil)
}

// BenchmarkParse10MB measures SCV's parser on a 10 MB stream of each wire:
// the bounded SSE reader, the limit counters, type-first decoding and the
// collector, up to the finished Response (no network).
func BenchmarkParse10MB(b *testing.B) {
	for _, wire := range []string{WireResponses, WireChat, WireAnthropic} {
		b.Run(wire, func(b *testing.B) {
			data, events := stream10MB(wire)
			c, err := newCore(Options{BaseURL: "http://127.0.0.1", Limits: Limits{MaxAssistantBytes: 16 << 20, MaxResponseBytes: 16 << 20}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu, n := cpuNanos(), 0
			for b.Loop() {
				n++
				p := benchParser(wire, c.limits)
				lr := &limitReader{r: bytes.NewReader(data), limit: c.limits.MaxResponseBytes * FramingAllowance}
				if err := c.readStream(b.Context(), b.Context(), lr, p); err != nil {
					b.Fatal(err)
				}
				r, err := p.collector().finish()
				if err != nil || len(r.Content) < 100<<10 || len(r.ToolCalls) != 1 {
					b.Fatalf("content %d bytes, %d calls, err %v", len(r.Content), len(r.ToolCalls), err)
				}
			}
			reportPerEvent(b, events, cpu, n)
		})
	}
}

// BenchmarkPlainScanner is the baseline: a bufio.Scanner over the same
// bytes and one json.Unmarshal per data line into the smallest struct that
// holds the wire's text delta, concatenating the text. It has no bounds,
// no tool calls, no reasoning and no usage.
func BenchmarkPlainScanner(b *testing.B) {
	for _, wire := range []string{WireResponses, WireChat, WireAnthropic} {
		b.Run(wire, func(b *testing.B) {
			data, events := stream10MB(wire)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu, n := cpuNanos(), 0
			for b.Loop() {
				n++
				var text strings.Builder
				sc := bufio.NewScanner(bytes.NewReader(data))
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
					if !ok || bytes.Equal(line, []byte("[DONE]")) {
						continue
					}
					switch wire {
					case WireResponses:
						var ev struct{ Type, Delta string }
						if json.Unmarshal(line, &ev) == nil && ev.Type == "response.output_text.delta" {
							text.WriteString(ev.Delta)
						}
					case WireChat:
						var ev struct {
							Choices []struct{ Delta struct{ Content string } }
						}
						if json.Unmarshal(line, &ev) == nil && len(ev.Choices) > 0 {
							text.WriteString(ev.Choices[0].Delta.Content)
						}
					case WireAnthropic:
						var ev struct {
							Type  string
							Delta struct{ Type, Text string }
						}
						if json.Unmarshal(line, &ev) == nil && ev.Delta.Type == "text_delta" {
							text.WriteString(ev.Delta.Text)
						}
					}
				}
				if sc.Err() != nil || text.Len() < 100<<10 {
					b.Fatalf("text %d bytes, err %v", text.Len(), sc.Err())
				}
			}
			reportPerEvent(b, events, cpu, n)
		})
	}
}
