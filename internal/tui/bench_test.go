package tui

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// feedTurn plays one scripted turn: prompt, streamed Markdown answer, one
// tool call with a 2 KiB output, final answer, completion.
func feedTurn(h *harness, i int) {
	turn := "t" + strconv.Itoa(i)
	call := "c" + strconv.Itoa(i)
	h.m.pending = append(h.m.pending, pendingPrompt{requestID: "r" + strconv.Itoa(i), text: fmt.Sprintf("prompt number %d: please look at the repository", i)})
	h.ev(proto.Event{Type: proto.EventTurnStarted, TurnID: turn})
	for _, frag := range []string{"Looking at ", "the **repository** ", "now.\n\n- one\n- two"} {
		h.ev(proto.Event{Type: proto.EventAssistantDelta, TurnID: turn, Content: str(frag)})
	}
	h.ev(proto.Event{Type: proto.EventAssistantComplete, TurnID: turn, Content: str("Looking at the **repository** now.\n\n- one\n- two")},
		proto.Event{Type: proto.EventToolProposed, TurnID: turn, CallID: call, Name: "bash", Arguments: args(map[string]any{"command": "ls -la"})},
		proto.Event{Type: proto.EventToolStarted, TurnID: turn, CallID: call, Name: "bash"},
		proto.Event{Type: proto.EventToolProgress, TurnID: turn, CallID: call, Text: "listing"},
		proto.Event{Type: proto.EventToolCompleted, TurnID: turn, CallID: call, Name: "bash", Success: proto.Ptr(true), Output: str(strings.Repeat("-rw-r--r-- 1 ada ada 1234 file.go\n", 60))},
		proto.Event{Type: proto.EventAssistantComplete, TurnID: turn, Content: str(fmt.Sprintf("Turn %d: the repository has `60` files.", i))},
		proto.Event{Type: proto.EventTurnCompleted, TurnID: turn, Usage: &proto.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100}})
}

// BenchmarkFirstFrame is the in-process part of first paint: building the
// model for a started session and rendering its first frame.
func BenchmarkFirstFrame(b *testing.B) {
	for b.Loop() {
		m := New(Config{Session: sessionStarted, Width: 120, Height: 40})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		_ = m.View()
	}
}

// BenchmarkView10kItems renders frames of a 10,000-item transcript while
// the last item streams (the steady state of a long session).
func BenchmarkView10kItems(b *testing.B) {
	cases := []struct {
		name string
		max  int
	}{
		{"held=10000", 20000},                // 10,000 items kept and walkable
		{"bounded=default", DefaultMaxItems}, // 10,000 items fed, the default bound kept
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(&testing.T{}, func(c *Config) { c.MaxItems = tc.max; c.Width = 120; c.Height = 40 })
			for i := 0; len(h.m.tr.items)+h.m.tr.evicted < 10000; i++ {
				feedTurn(h, i)
			}
			h.prompt("stream", "tX")
			h.ev(proto.Event{Type: proto.EventAssistantDelta, TurnID: "tX", Content: str(strings.Repeat("streamed words ", 40))})
			_ = h.m.Render()
			// Each frame re-renders the streaming item (as after a delta)
			// without letting it grow, so frames stay comparable.
			last := h.m.tr.last()
			b.ResetTimer()
			for b.Loop() {
				last.touch()
				_ = h.m.View()
			}
			b.ReportMetric(float64(len(h.m.tr.items)), "items")
		})
	}
}

// BenchmarkResize10kItems is a reflow: every frame at a new width, so each
// visible item renders afresh.
func BenchmarkResize10kItems(b *testing.B) {
	h := newHarness(&testing.T{}, func(c *Config) { c.MaxItems = 20000; c.Width = 120; c.Height = 40 })
	for i := 0; len(h.m.tr.items) < 10000; i++ {
		feedTurn(h, i)
	}
	w := 100
	for b.Loop() {
		w = 100 + (w-99)%40
		h.m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
		_ = h.m.View()
	}
}

// BenchmarkThousandTurns feeds 1,000 scripted turns, one frame per turn,
// and reports the live heap and the process RSS afterwards.
func BenchmarkThousandTurns(b *testing.B) {
	for b.Loop() {
		h := newHarness(&testing.T{}, func(c *Config) { c.Width = 120; c.Height = 40 })
		start := time.Now()
		for i := range 1000 {
			feedTurn(h, i)
			_ = h.m.View()
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "µs/turn")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric(testutil.RSSMiB(0), "rss-MiB")
		runtime.KeepAlive(h)
	}
}
