package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchSession is the model-visible history of a session after turns
// 1-step turns: a prompt, an assistant message calling bash, the tool's
// output (≈ 300 bytes, with quotes, newlines and a tab to escape) and a
// closing answer. 1,500 turns are ≈ 0.5 MB of messages.
func benchSession(turns int) []Message {
	out := strings.Repeat("ok  \tgithub.com/example/pkg/\"sub\"\t0.012s <done>\n", 6)
	msgs := make([]Message, 0, 4*turns)
	for i := 0; i < turns; i++ {
		id := fmt.Sprintf("call_%06d", i)
		msgs = append(msgs,
			Message{Role: User, Content: fmt.Sprintf("run the tests of package %d and tell me what failed", i)},
			Message{Role: Assistant, Content: "Running the tests.", ToolCalls: []ToolCall{{ID: id, Name: "bash", Arguments: fmt.Sprintf(`{"command":"go test ./pkg%d/...","timeout_ms":120000}`, i)}},
				Thinking: []Thinking{{Text: "the user wants the tests", Signature: "sig" + id}}},
			Message{Role: ToolRole, ToolCallID: id, Name: "bash", Content: out},
			Message{Role: Assistant, Content: fmt.Sprintf("All tests of package %d pass; nothing failed.", i)},
		)
	}
	return msgs
}

// BenchmarkEncodeHistory measures building and encoding one request body
// at turn N of one session, per wire: what each step of a turn pays before
// the request is sent. Figures: docs/benchmarks/model.md.
func BenchmarkEncodeHistory(b *testing.B) {
	tools := []ToolSpec{{Name: "bash", Description: "run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}
	for _, wire := range []string{WireResponses, WireChat, WireAnthropic} {
		for _, turns := range []int{1, 100, 500, 1500} {
			req := Request{Model: "m", Instructions: "You are SCV.", Tools: tools, ReasoningEffort: "low", Messages: benchSession(turns)}
			for _, cached := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/turns=%d/cache=%v", wire, turns, cached), func(b *testing.B) {
					c, err := newCore(Options{BaseURL: "http://127.0.0.1:1", WireAPI: wire})
					if err != nil {
						b.Fatal(err)
					}
					r := req
					if cached {
						r.Cache = NewHistoryCache()
						if _, err := encodeRequest(c, wire, r); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					size, i := 0, 0
					for b.Loop() {
						// Each step appends a new tool call and its output, as a
						// step of the running turn does; every 64 steps the
						// history starts again from the N turns.
						i++
						if i%64 == 0 {
							r.Messages = req.Messages[:len(req.Messages):len(req.Messages)]
						}
						id := fmt.Sprintf("step_%d", i)
						r.Messages = append(r.Messages,
							Message{Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"ls"}`}}},
							Message{Role: ToolRole, ToolCallID: id, Name: "bash", Content: "file " + id})
						body, err := encodeBody(c, wire, r)
						if err != nil {
							b.Fatal(err)
						}
						size = body.size
					}
					b.ReportMetric(float64(size), "body-bytes")
				})
			}
		}
	}
}

// encodeRequest is the body Stream would send for req on wire.
func encodeRequest(c *core, wire string, req Request) ([]byte, error) {
	b, err := encodeBody(c, wire, req)
	return b.bytes(), err
}

// encodeBody is the body Stream would send for req on wire, in its parts.
func encodeBody(c *core, wire string, req Request) (b reqBody, err error) {
	switch wire {
	case WireChat:
		b, err = c.encodeChat(req)
	case WireAnthropic:
		budget, berr := thinkingBudget(firstNonEmpty(req.ReasoningEffort, c.opts.ReasoningEffort))
		if berr != nil {
			return reqBody{}, berr
		}
		b, err = c.encodeAnthropic(req, budget)
	default:
		b, err = c.encodeResponses(req)
	}
	return b, err
}
