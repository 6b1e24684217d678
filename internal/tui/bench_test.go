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
	h.ev(&proto.TurnStarted{TurnHeader: th(turn)})
	for _, frag := range []string{"Looking at ", "the **repository** ", "now.\n\n- one\n- two"} {
		h.ev(&proto.AssistantDelta{TurnHeader: th(turn), Content: frag})
	}
	h.ev(&proto.AssistantCompleted{TurnHeader: th(turn), Content: "Looking at the **repository** now.\n\n- one\n- two"},
		&proto.ToolProposed{TurnHeader: th(turn), CallID: call, Name: "bash", Arguments: args(map[string]any{"command": "ls -la"})},
		&proto.ToolStarted{TurnHeader: th(turn), CallID: call, Name: "bash"},
		&proto.ToolProgress{TurnHeader: th(turn), CallID: call, Text: "listing"},
		&proto.ToolCompleted{TurnHeader: th(turn), CallID: call, Name: "bash", Success: true, Output: strings.Repeat("-rw-r--r-- 1 ada ada 1234 file.go\n", 60)},
		&proto.AssistantCompleted{TurnHeader: th(turn), Content: fmt.Sprintf("Turn %d: the repository has `60` files.", i)},
		&proto.TurnCompleted{TurnHeader: th(turn), Usage: &proto.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100}})
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
			streamDelta(h)
			_ = h.m.Render()
			streamingFrames(b, h, nil)
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

// BenchmarkComposerKeystroke is one typed character and the frame after
// it, with the composer holding a short prompt, pasted texts of 4, 16 and
// 64 KiB, or a prompt at the protocol's 256 KiB limit (lines of 72 bytes),
// the cursor at the end.
func BenchmarkComposerKeystroke(b *testing.B) {
	for _, size := range []int{16, 4 << 10, 16 << 10, 64 << 10, proto.MaxPromptBytes - 64} {
		b.Run(fmt.Sprintf("prompt=%dB", size), func(b *testing.B) {
			h := newHarness(&testing.T{}, func(c *Config) { c.Width = 120; c.Height = 40 })
			line := strings.Repeat("word ", 12) + "end of line\n" // 72 bytes
			text := strings.Repeat(line, size/len(line)+1)[:size]
			h.m.Update(tea.PasteMsg{Content: text})
			_ = h.m.View()
			x := tea.KeyPressMsg{Code: 'x', Text: "x"}
			bs := tea.KeyPressMsg{Code: tea.KeyBackspace}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					h.m.Update(x)
				} else {
					h.m.Update(bs)
				}
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkFrameWithDraft is a frame while an answer streams and the
// composer holds a pasted 64 KiB draft that does not change.
func BenchmarkFrameWithDraft(b *testing.B) {
	h := newHarness(&testing.T{}, func(c *Config) { c.Width = 120; c.Height = 40 })
	h.prompt("stream", "tX")
	line := strings.Repeat("word ", 12) + "end of line\n"
	h.m.Update(tea.PasteMsg{Content: strings.Repeat(line, (64<<10)/len(line))})
	streamDelta(h)
	_ = h.m.View()
	streamingFrames(b, h, nil)
}

// streamDelta streams a first piece of answer into turn tX.
func streamDelta(h *harness) {
	h.ev(&proto.AssistantDelta{TurnHeader: th("tX"), Content: strings.Repeat("streamed words ", 40)})
}

// streamingFrames times frames that each re-render the streaming item
// (as after a delta) without letting it grow, so frames stay comparable;
// before, unless nil, runs ahead of each frame.
func streamingFrames(b *testing.B, h *harness, before func()) {
	last := h.m.tr.last()
	b.ResetTimer()
	for b.Loop() {
		if before != nil {
			before()
		}
		last.touch()
		_ = h.m.View()
	}
}

// diff5000 is a unified diff of 5,000 lines (the server's bound).
func diff5000() *proto.Diff {
	var b strings.Builder
	b.WriteString("--- a/big.go\n+++ b/big.go\n")
	n := 2
	for h := 0; n < 5000; h++ {
		fmt.Fprintf(&b, "@@ -%d,7 +%d,7 @@\n", h*20+1, h*20+1)
		n++
		for i := 0; i < 7 && n < 5000; i++ {
			mark := " "
			switch i {
			case 3:
				mark = "-"
			case 4:
				mark = "+"
			}
			fmt.Fprintf(&b, "%s\tvalue%d := compute(%d, \"a line of ordinary source text\") // %d\n", mark, i, h, n)
			n++
		}
	}
	return &proto.Diff{Path: "big.go", Text: b.String(), Added: 625, Removed: 625}
}

// BenchmarkApprovalDiff5000 is the frame time with a 5,000-line diff open
// in the approval panel: "first" builds the panel's wrapped, coloured
// lines (the first frame after approval.requested), "scroll" is a frame
// after ↓ (the steady state while reading), "resize" re-wraps at a new
// width every frame.
func BenchmarkApprovalDiff5000(b *testing.B) {
	d := diff5000()
	ev := func() *proto.ApprovalRequested {
		return &proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "write", Risk: "filesystem", Cwd: "/w",
			Summary: "replace big.go (1048576 bytes)", Diff: d, Grant: &proto.Grant{Tool: "write", Risk: "filesystem"}}
	}
	setup := func() *harness {
		h := newHarness(&testing.T{}, func(c *Config) { c.Width = 120; c.Height = 40 })
		for i := 0; i < 50; i++ {
			feedTurn(h, i)
		}
		h.prompt("rewrite big.go", "t1")
		return h
	}
	b.Run("first", func(b *testing.B) {
		h := setup()
		b.ReportAllocs()
		for b.Loop() {
			h.m.approval = nil
			h.m.approvalRequested(ev())
			_ = h.m.View()
		}
	})
	b.Run("scroll", func(b *testing.B) {
		h := setup()
		h.ev(ev())
		_ = h.m.View()
		b.ReportAllocs()
		for b.Loop() {
			if !h.m.scrollApproval(1) {
				h.m.approval.scroll = 0
			}
			_ = h.m.View()
		}
	})
	b.Run("resize", func(b *testing.B) {
		h := setup()
		h.ev(ev())
		w := 100
		b.ReportAllocs()
		for b.Loop() {
			w = 220 - w // 120, 100, 120, …
			h.m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
			_ = h.m.View()
		}
	})
}

// BenchmarkSlashMenuOpen renders frames of a 10,000-item transcript with
// the slash menu open (a "/" typed): the menu is filtered and laid out on
// every frame, beside the transcript's cached lines.
func BenchmarkSlashMenuOpen(b *testing.B) {
	for _, open := range []bool{false, true} {
		b.Run(fmt.Sprintf("menu=%v", open), func(b *testing.B) {
			h := newHarness(&testing.T{}, func(c *Config) { c.MaxItems = 20000; c.Width = 120; c.Height = 40 })
			for i := 0; len(h.m.tr.items) < 10000; i++ {
				feedTurn(h, i)
			}
			if open {
				h.typeText("/")
			}
			_ = h.m.View()
			for b.Loop() {
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkCostDisplay10kItems renders frames of a 10,000-item transcript
// whose turns carry a cost, so the status line shows tokens and cost:
// steady (the total unchanged between frames, as while a turn streams)
// and changing (a turn's usage added before every frame, the worst case).
// Compare with BenchmarkView10kItems/held=10000 of the tree before.
func BenchmarkCostDisplay10kItems(b *testing.B) {
	for _, changing := range []bool{false, true} {
		b.Run(fmt.Sprintf("changing=%v", changing), func(b *testing.B) {
			h := newHarness(&testing.T{}, func(c *Config) { c.MaxItems = 20000; c.Width = 120; c.Height = 40 })
			cost := 0.0042
			for i := 0; len(h.m.tr.items) < 10000; i++ {
				feedTurn(h, i)
				h.m.spend.turns[len(h.m.spend.turns)-1].usage.CostUSD = &cost
			}
			h.m.spend.resumed(&proto.Usage{InputTokens: 1 << 30, OutputTokens: 1 << 20, TotalTokens: 1<<30 + 1<<20, CostUSD: &cost})
			h.prompt("stream", "tX")
			streamDelta(h)
			_ = h.m.Render()
			if !strings.Contains(h.frame(), " tok · $") {
				b.Fatalf("no cost in the status line:\n%s", h.frame())
			}
			var addTurn func()
			if changing {
				u := proto.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100, CostUSD: &cost}
				addTurn = func() { h.m.spend.turnDone(turnSpend{id: "tY", usage: u}) }
			}
			streamingFrames(b, h, addTurn)
		})
	}
}
