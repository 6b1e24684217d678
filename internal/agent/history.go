package agent

import (
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// HistoryOptions bound the canonical history (session.*).
type HistoryOptions struct {
	MaxBytes    int
	MaxMessages int
}

// meta is what the loop remembers about a message beyond its text.
type meta struct {
	bytes int
	ok    bool // tool messages: the call succeeded
}

// history is the canonical conversation. Messages are only appended at the
// end or removed, in whole groups, from the front; turnStart marks the
// current turn's user message, which is never trimmed.
type history struct {
	msgs      []model.Message
	meta      []meta
	bytes     int
	turnStart int
	sums      sums
	// added counts the messages ever appended (see HistoryChange).
	added int64
}

// sums are running totals over the history, kept by every change so that
// a step's context estimate does not walk the whole history.
type sums struct {
	images int // messages with images
	// tokens is the context estimate of every message at tokBPT bytes a
	// token (valid when tokBPT > 0; see history.tokens).
	tokens, tokBPT int
}

type snapshot struct {
	msgs      []model.Message
	meta      []meta
	bytes     int
	turnStart int
	sums      sums
}

// snapshot captures the history cheaply: later appends never write below
// the captured length and trims only re-slice.
func (h *history) snapshot() snapshot {
	return snapshot{msgs: h.msgs[:len(h.msgs):len(h.msgs)], meta: h.meta[:len(h.meta):len(h.meta)], bytes: h.bytes, turnStart: h.turnStart, sums: h.sums}
}

// restore returns to s; added keeps counting (the messages appended since
// s are gone, but they were appended).
func (h *history) restore(s snapshot) {
	h.msgs, h.meta, h.bytes, h.turnStart, h.sums = s.msgs, s.meta, s.bytes, s.turnStart, s.sums
}

func (h *history) append(m model.Message, ok bool) {
	if m.Role == model.User {
		h.turnStart = len(h.msgs)
	}
	n := messageBytes(m)
	h.msgs = append(h.msgs, m)
	h.meta = append(h.meta, meta{bytes: n, ok: ok})
	h.bytes += n
	h.count(m, n, 1)
	h.added++
}

// count adds (sign 1) or removes (sign -1) a message of n bytes from sums.
func (h *history) count(m model.Message, n, sign int) {
	if len(m.Images) > 0 {
		h.sums.images += sign
	}
	if b := h.sums.tokBPT; b > 0 {
		h.sums.tokens += sign * ((n+b-1)/b + 4)
	}
}

// tokens is the context estimate of the whole history (estimateMessages
// of its messages), from the running total when it is kept at c's bytes
// per token, else computed once and kept from then on.
func (h *history) tokens(c ContextOptions) int {
	if b := c.bpt(); h.sums.tokBPT != b {
		t := 0
		for _, m := range h.meta {
			t += estimate(c, m.bytes)
		}
		h.sums.tokens, h.sums.tokBPT = t, b
	}
	return h.sums.tokens
}

// dropFront removes the first n messages.
func (h *history) dropFront(n int) {
	for i, m := range h.meta[:n] {
		h.bytes -= m.bytes
		h.count(h.msgs[i], m.bytes, -1)
	}
	h.msgs = h.msgs[n:]
	h.meta = h.meta[n:]
	h.turnStart -= n
}

// dropThinking removes the thinking blocks of the current turn's messages
// once the turn has its final answer. The messages are new in this turn,
// so no snapshot shares them.
func (h *history) dropThinking() {
	for i := max(h.turnStart, 0); i < len(h.msgs); i++ {
		if len(h.msgs[i].Thinking) == 0 {
			continue
		}
		h.count(h.msgs[i], h.meta[i].bytes, -1)
		h.msgs[i].Thinking = nil
		n := messageBytes(h.msgs[i])
		h.bytes += n - h.meta[i].bytes
		h.meta[i].bytes = n
		h.count(h.msgs[i], n, 1)
	}
}

func messageBytes(m model.Message) int {
	n := len(m.Content) + len(m.ToolCallID) + len(m.Name) + len(m.Role)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	for _, t := range m.Thinking {
		n += t.Size()
	}
	n += len(m.Images) * imageBytes
	return n
}

// imageBytes is what one input image counts for in the history's bytes
// and so in the context estimate: about 1,500 tokens at 4 bytes a token,
// near what the providers charge for a screenshot. The image's own bytes
// do not count: they are sent base64-encoded but billed by pixels.
const imageBytes = 6000

// groupEnd returns the index after the group starting at i: a user message
// alone, or an assistant message with the tool messages answering it.
func groupEnd(msgs []model.Message, i int) int {
	j := i + 1
	for j < len(msgs) && msgs[j].Role == model.ToolRole {
		j++
	}
	return j
}

// trim keeps the canonical history within session.max_history_bytes and
// max_messages by removing the oldest whole groups before the current turn.
func (s *Session) trim(ev Emit) error {
	h := &s.hist
	lim := s.opts.History
	over := func() bool {
		return (lim.MaxBytes > 0 && h.bytes > lim.MaxBytes) || (lim.MaxMessages > 0 && len(h.msgs) > lim.MaxMessages)
	}
	if !over() {
		return nil
	}
	removed := 0
	for over() && h.turnStart > 0 {
		n := groupEnd(h.msgs, 0)
		if n > h.turnStart {
			n = h.turnStart
		}
		h.dropFront(n)
		removed += n
	}
	if removed > 0 {
		ev(&proto.SessionTrimmed{RemovedMessages: removed, HistoryBytes: h.bytes})
	}
	if over() {
		return fail(proto.FailHistory, "the current turn alone needs %d bytes in %d messages, above session.max_history_bytes (%d) or session.max_messages (%d); start with a smaller prompt or raise the limits", h.bytes, len(h.msgs), lim.MaxBytes, lim.MaxMessages)
	}
	return nil
}
