package agent

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model"
)

// selectFull is context selection as it was before selectWithin: every
// message's cost and every group's start computed over the whole history.
// TestSelectionIncremental compares the two.
func selectFull(c ContextOptions, fixed int, msgs []model.Message, metas []meta, user int) (selection, error) {
	budget := c.MaxTokens - c.ReserveOutputTokens - c.SafetyMarginTokens - fixed
	if user < 0 || user >= len(msgs) || msgs[user].Role != model.User {
		user = lastUser(msgs)
	}
	if user < 0 {
		return selection{}, fail("internal", "no user message to answer")
	}
	cost := make([]int, len(msgs))
	total := 0
	for i := range msgs {
		cost[i] = estimate(c, metas[i].bytes)
		total += cost[i]
	}
	if cost[user] > budget {
		return selection{}, fail("context", "too big")
	}
	if fixed+total <= c.MaxTokens-c.ReserveOutputTokens-c.SafetyMarginTokens {
		return selection{msgs: msgs, before: fixed + total, after: fixed + total}, nil
	}
	var starts []int
	for i := 0; i < len(msgs); i = groupEnd(msgs, i) {
		starts = append(starts, i)
	}
	keepFrom := len(msgs)
	used := cost[user]
	for g := len(starts) - 1; g >= 0; g-- {
		st, end := starts[g], groupEnd(msgs, starts[g])
		if st == user {
			keepFrom = st
			continue
		}
		gc := 0
		for i := st; i < end; i++ {
			gc += cost[i]
		}
		if used+gc > budget {
			break
		}
		used += gc
		keepFrom = st
	}
	out, removed, after := withNote(c, msgs, newNoter(msgs, metas, c.SummaryMaxChars), user, keepFrom, used, budget, func(i int) int { return cost[i] })
	return selection{msgs: out, removed: removed, before: fixed + total, after: fixed + after}, nil
}

// randomTurn appends a user message and up to three assistant groups (tool
// calls with thinking, tool results, an empty or a final answer).
func randomTurn(r *rand.Rand, h *history, n int) {
	user := model.Message{Role: model.User, Content: fmt.Sprintf("prompt %d %s", n, strings.Repeat("u", r.IntN(400)))}
	if r.IntN(10) == 0 {
		user.Images = []model.Image{{MediaType: "image/png", Path: "a.png", Data: []byte{1}}}
	}
	h.append(user, true)
	for g := r.IntN(4); g > 0; g-- {
		var calls []model.ToolCall
		for k := r.IntN(3); k > 0; k-- {
			calls = append(calls, model.ToolCall{ID: fmt.Sprintf("c%d_%d_%d", n, g, k), Name: "bash", Arguments: `{"command":"ls"}`})
		}
		a := model.Message{Role: model.Assistant, Content: []string{"", "working on it", strings.Repeat("a", r.IntN(900))}[r.IntN(3)], ToolCalls: calls}
		if r.IntN(2) == 0 {
			a.Thinking = []model.Thinking{{Text: strings.Repeat("t", r.IntN(300)), Signature: "s"}}
		}
		h.append(a, true)
		for _, c := range calls {
			h.append(model.Message{Role: model.ToolRole, ToolCallID: c.ID, Name: c.Name, Content: strings.Repeat("o", r.IntN(1500))}, r.IntN(5) > 0)
		}
	}
}

// TestSelectionIncremental runs random histories through the changes a
// session makes (turns, failed turns restored, thinking dropped, trims from
// the front, a clear) and checks after each that selectContext's way (the
// running totals, the backward walk) gives exactly the full computation's
// selection, over budgets from "all fits" to "only the newest message".
func TestSelectionIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var h history
	compacted := 0
	for step := 0; step < 600; step++ {
		switch op := r.IntN(12); {
		case op == 0 && h.turnStart > 0: // trim the oldest group
			h.dropFront(min(groupEnd(h.msgs, 0), h.turnStart))
		case op == 1: // a failed turn: restored
			s := h.snapshot()
			randomTurn(r, &h, step)
			h.restore(s)
		case op == 2 && step%50 == 0:
			h = history{}
		default:
			randomTurn(r, &h, step)
			if r.IntN(3) > 0 {
				h.dropThinking()
				h.turnStart = len(h.msgs)
			}
		}
		if len(h.msgs) == 0 {
			continue
		}
		for _, bpt := range []int{3, 4} {
			c := ContextOptions{BytesPerToken: bpt, ReserveOutputTokens: 100, SafetyMarginTokens: 50, SummaryMaxChars: 300 + r.IntN(3000)}
			full := estimateMessages(c, h.msgs)
			if got := h.tokens(c); got != full {
				t.Fatalf("step %d: running estimate %d, want %d", step, got, full)
			}
			for _, window := range []int{full + 500, full/2 + 200, full / 5, 400, 160} {
				c.MaxTokens = window
				fixed := r.IntN(40)
				want, werr := selectFull(c, fixed, h.msgs, h.meta, h.turnStart)
				got, gerr := selectWithin(c, fixed, h.msgs, h.meta, h.turnStart, h.tokens(c))
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("step %d window %d: error %v, want %v", step, window, gerr, werr)
				}
				if got.removed > 0 {
					compacted++
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d window %d: selection differs:\n got removed=%d before=%d after=%d %d msgs\nwant removed=%d before=%d after=%d %d msgs",
						step, window, got.removed, got.before, got.after, len(got.msgs), want.removed, want.before, want.after, len(want.msgs))
				}
			}
		}
		images := 0
		for _, m := range h.msgs {
			if len(m.Images) > 0 {
				images++
			}
		}
		if h.sums.images != images {
			t.Fatalf("step %d: %d messages with images counted, want %d", step, h.sums.images, images)
		}
	}
	if compacted < 1000 {
		t.Fatalf("only %d selections compacted", compacted)
	}
}
