package agent

import (
	"fmt"
	"testing"

	"github.com/scv-agent/scv/internal/model"
)

// benchHistory builds a history of n small messages through history.append:
// turns of a user prompt, an assistant message asking for a tool call, the
// tool's answer and the assistant's reply. The last turn is in progress, so
// the newest user message is not the last message.
func benchHistory(n int) *history {
	h := &history{}
	for i := 0; len(h.msgs) < n; i++ {
		switch i % 4 {
		case 0:
			h.append(model.Message{Role: model.User, Content: fmt.Sprintf("please look at file %d and fix the failing test", i)}, true)
		case 1:
			h.append(model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path":"src/f%d.go"}`, i)}}}, true)
		case 2:
			h.append(model.Message{Role: model.ToolRole, ToolCallID: fmt.Sprintf("call_%d", i-1), Name: "read", Content: fmt.Sprintf(`{"path":"src/f%d.go","offset":0,"content":"package f\n","total_bytes":10,"truncated":false}`, i)}, i%8 != 2)
		case 3:
			h.append(model.Message{Role: model.Assistant, Content: fmt.Sprintf("fixed the test in f%d.go", i)}, true)
		}
	}
	return h
}

// BenchmarkSelectMessages measures context selection over 10,000 small
// messages: with a budget everything fits, with the default 128k budget
// (about half is compacted away) and with a small 8k budget (almost all is).
// Target: under 20 ms per selection.
func BenchmarkSelectMessages(b *testing.B) {
	h := benchHistory(10_000)
	if len(h.msgs) != 10_000 || h.turnStart <= 0 {
		b.Fatalf("history: %d messages, turn start %d", len(h.msgs), h.turnStart)
	}
	base := ContextOptions{ReserveOutputTokens: 8192, SafetyMarginTokens: 2048, BytesPerToken: 3, SummaryMaxChars: 6000}
	for _, tc := range []struct {
		name      string
		maxTokens int
		compacts  bool
	}{
		{"fits", 10_000_000, false},
		{"compact-128k", 128_000, true},
		{"compact-16k", 16_000, true},
	} {
		c := base
		c.MaxTokens = tc.maxTokens
		const fixed = 3000 // system prompt and tool schemas
		sel, err := selectMessages(c, fixed, h.msgs, h.meta, h.turnStart)
		if err != nil {
			b.Fatal(err)
		}
		if (sel.removed > 0) != tc.compacts || sel.after > c.MaxTokens-c.ReserveOutputTokens-c.SafetyMarginTokens {
			b.Fatalf("%s: removed %d, before %d, after %d tokens", tc.name, sel.removed, sel.before, sel.after)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := selectMessages(c, fixed, h.msgs, h.meta, h.turnStart); err != nil {
					b.Fatal(err)
				}
			}
			// After the loop: b.Loop resets the timer, which drops metrics.
			b.ReportMetric(float64(sel.removed), "removed")
			b.ReportMetric(float64(len(sel.msgs)), "kept")
		})
	}
}

// BenchmarkCompactionPass measures building one compaction note with half
// of the 10,000 messages removed, from a fresh line cache (the first pass
// of a selection; retries reuse the cache).
func BenchmarkCompactionPass(b *testing.B) {
	h := benchHistory(10_000)
	keepFrom := groupEnd(h.msgs, len(h.msgs)/2)
	if _, removed := assemble(h.msgs, keepFrom, h.turnStart); removed < 4000 {
		b.Fatalf("removed %d", removed)
	}
	b.ReportAllocs()
	for b.Loop() {
		if newNoter(h.msgs, h.meta, 6000).note(keepFrom, h.turnStart) == "" {
			b.Fatal("empty note")
		}
	}
}

// BenchmarkHistoryAppend measures building the 10,000-message history.
func BenchmarkHistoryAppend(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchHistory(10_000)
	}
}
