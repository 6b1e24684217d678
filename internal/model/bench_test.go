package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// stream1MB builds about 1 MiB of stream events carrying 100-byte text
// deltas for the given wire.
func stream1MB(wire string) []byte {
	var b bytes.Buffer
	delta := string(bytes.Repeat([]byte("x"), 100))
	for b.Len() < 1<<20 {
		var ev any
		if wire == WireChat {
			ev = map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": delta}}}}
		} else {
			ev = map[string]any{"type": "response.output_text.delta", "item_id": "msg_0", "output_index": 0, "content_index": 0, "delta": delta}
		}
		j, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	if wire == WireChat {
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	} else {
		b.WriteString("data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n")
	}
	return b.Bytes()
}

// BenchmarkParse1MB measures decoding and folding a 1 MiB stream (no
// network): SSE framing, JSON per event, limits, accumulation.
func BenchmarkParse1MB(b *testing.B) {
	for _, wire := range []string{WireResponses, WireChat} {
		b.Run(wire, func(b *testing.B) {
			data := stream1MB(wire)
			c, err := newCore(Options{BaseURL: "http://127.0.0.1"})
			if err != nil {
				b.Fatal(err)
			}
			c.limits.MaxAssistantBytes = 4 << 20
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				col := newCollector(c.limits, nil)
				var p eventParser = &responsesParser{col: col, items: map[string]*callAcc{}}
				if wire == WireChat {
					p = &chatParser{col: col, byIndex: map[int]*callAcc{}}
				}
				lr := &limitReader{r: bytes.NewReader(data), limit: c.limits.MaxResponseBytes}
				if err := c.readStream(b.Context(), b.Context(), lr, p); err != nil {
					b.Fatal(err)
				}
				if col.text.Len() < 400<<10 {
					b.Fatalf("text = %d bytes", col.text.Len())
				}
			}
		})
	}
}
