package agent

import (
	"fmt"
	"strings"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// ContextOptions are the [context] settings.
type ContextOptions struct {
	MaxTokens           int
	ReserveOutputTokens int
	SafetyMarginTokens  int
	BytesPerToken       int
	SummaryMaxChars     int
}

func (c ContextOptions) bpt() int {
	if c.BytesPerToken <= 0 {
		return 3
	}
	return c.BytesPerToken
}

func estimateText(c ContextOptions, s string) int {
	b := c.bpt()
	return (len(s) + b - 1) / b
}

// estimate is ceil(bytes / bytes_per_token) + 4 per message.
func estimate(c ContextOptions, n int) int {
	b := c.bpt()
	return (n+b-1)/b + 4
}

func estimateMessages(c ContextOptions, msgs []model.Message) int {
	t := 0
	for _, m := range msgs {
		t += estimate(c, messageBytes(m))
	}
	return t
}

// selection is the outcome of context selection.
type selection struct {
	msgs    []model.Message
	removed int
	before  int
	after   int
}

// selectContext picks the model-visible messages and reports compaction.
// Its cost does not grow with the history: the whole history's estimate is
// the history's running total, and selectWithin walks only what it keeps.
func (s *Session) selectContext(c ContextOptions, ev Emit) ([]model.Message, error) {
	sel, err := selectWithin(c, s.fixedTokens(), s.hist.msgs, s.hist.meta, s.hist.turnStart, s.hist.tokens(c))
	if err != nil {
		return nil, err
	}
	if sel.removed > 0 && sel.removed != s.lastCut {
		ev(&proto.ContextCompacted{BeforeTokens: sel.before, AfterTokens: sel.after, RemovedMessages: sel.removed})
	}
	s.lastCut = sel.removed
	return sel.msgs, nil
}

// selectMessages keeps the newest user message (at index user) and whole
// assistant/tool groups, newest first, as many as fit the budget; the rest is
// replaced by one deterministic compaction note. It is a pure function.
func selectMessages(c ContextOptions, fixed int, msgs []model.Message, metas []meta, user int) (selection, error) {
	total := 0
	for i := range msgs {
		total += estimate(c, metas[i].bytes)
	}
	return selectWithin(c, fixed, msgs, metas, user, total)
}

// selectWithin is selectMessages given total, the estimate of all of msgs.
// It reads the messages it keeps and those its note summarises, newest
// first, never the whole history.
func selectWithin(c ContextOptions, fixed int, msgs []model.Message, metas []meta, user, total int) (selection, error) {
	budget := c.MaxTokens - c.ReserveOutputTokens - c.SafetyMarginTokens - fixed
	if user < 0 || user >= len(msgs) || msgs[user].Role != model.User {
		user = lastUser(msgs)
	}
	if user < 0 {
		return selection{}, fail(proto.FailInternal, "no user message to answer")
	}
	cost := func(i int) int { return estimate(c, metas[i].bytes) }
	if cost(user) > budget {
		return selection{}, fail(proto.FailContext, "the system prompt, tool schemas and the newest message need about %d tokens, above the %d available (context.max_tokens %d minus reserves); shorten the prompt or raise context.max_tokens", fixed+cost(user), c.MaxTokens-c.ReserveOutputTokens-c.SafetyMarginTokens, c.MaxTokens)
	}
	if fixed+total <= c.MaxTokens-c.ReserveOutputTokens-c.SafetyMarginTokens {
		return selection{msgs: msgs, before: fixed + total, after: fixed + total}, nil
	}
	keepFrom := len(msgs) // kept suffix starts here (user message aside)
	used := cost(user)
	for end := len(msgs); end > 0; end = keepFrom {
		st := groupStart(msgs, end)
		if st == user {
			keepFrom = st
			continue
		}
		gc := 0
		for i := st; i < end; i++ {
			gc += cost(i)
		}
		if used+gc > budget {
			break
		}
		used += gc
		keepFrom = st
	}
	out, removed, after := withNote(c, msgs, newNoter(msgs, metas, c.SummaryMaxChars), user, keepFrom, used, budget, cost)
	return selection{msgs: out, removed: removed, before: fixed + total, after: fixed + after}, nil
}

// withNote puts the compaction note before what is kept (msgs from
// keepFrom, and the user message), which costs used of budget tokens; while
// the note does not fit, it drops the oldest kept groups (never the user
// message) and measures the note again. It returns the messages to send,
// how many the note stands for, and their cost.
func withNote(c ContextOptions, msgs []model.Message, notes *noter, user, keepFrom, used, budget int, cost func(int) int) ([]model.Message, int, int) {
	for {
		noteMsg := model.Message{Role: model.User, Content: notes.note(keepFrom, user)}
		after := used + estimate(c, messageBytes(noteMsg))
		if after <= budget || keepFrom >= len(msgs) {
			kept, removed := assemble(msgs, keepFrom, user)
			if after > budget {
				// Even the note does not fit beside the newest message: send
				// without it rather than fail.
				return kept, removed, used
			}
			return append([]model.Message{noteMsg}, kept...), removed, after
		}
		// Drop the oldest kept groups (never the user message) until the
		// note's cost is freed, then measure the note again.
		for deficit := after - budget; deficit > 0 && keepFrom < len(msgs); {
			if keepFrom == user {
				keepFrom = groupEnd(msgs, user)
				continue
			}
			end := groupEnd(msgs, keepFrom)
			for i := keepFrom; i < end; i++ {
				used -= cost(i)
				deficit -= cost(i)
			}
			keepFrom = end
		}
	}
}

// groupStart is the start of the group that ends at end (groupEnd's
// partition walked backwards): the last message before end that is not a
// tool result, or 0.
func groupStart(msgs []model.Message, end int) int {
	i := end - 1
	for i > 0 && msgs[i].Role == model.ToolRole {
		i--
	}
	return i
}

// assemble returns the kept messages in order and how many were removed.
func assemble(msgs []model.Message, keepFrom, user int) ([]model.Message, int) {
	kept := make([]model.Message, 0, len(msgs)-keepFrom+1)
	if user < keepFrom {
		kept = append(kept, msgs[user])
	}
	kept = append(kept, msgs[keepFrom:]...)
	return kept, len(msgs) - len(kept)
}

// noter builds compaction notes, caching each message's line so retries
// during one selection stay cheap.
type noter struct {
	msgs     []model.Message
	metas    []meta
	maxChars int
	lines    map[int]string
}

func newNoter(msgs []model.Message, metas []meta, maxChars int) *noter {
	if maxChars <= 0 {
		maxChars = 6000
	}
	return &noter{msgs: msgs, metas: metas, maxChars: maxChars, lines: map[int]string{}}
}

// line is the note line of message i ("" for a message that adds nothing).
func (n *noter) line(i int) string {
	if l, ok := n.lines[i]; ok {
		return l
	}
	m, l := n.msgs[i], ""
	switch m.Role {
	case model.User:
		l = "- goal: " + oneLine(m.Content, 200)
	case model.Assistant:
		if strings.TrimSpace(m.Content) != "" {
			l = "- outcome: " + oneLine(m.Content, 200)
		}
	case model.ToolRole:
		status := "ok"
		if !n.metas[i].ok {
			status = "failed"
		}
		l = fmt.Sprintf("- tool %s %s: %s", m.Name, status, tail(oneLine(tail(m.Content, 4096), 4096), 120))
	}
	n.lines[i] = l
	return l
}

// note summarises the messages removed when the kept suffix starts at
// keepFrom (user aside): prior goals (user prompts), outcomes (assistant
// text) and each tool call's name, success and a short tail of its output,
// newest entries kept when the note would exceed maxChars.
func (n *noter) note(keepFrom, user int) string {
	removed := keepFrom
	if user < keepFrom {
		removed--
	}
	header := fmt.Sprintf("[context note] %d earlier messages were removed to fit the context window. Summary of what they held:", removed)
	budget := n.maxChars - len(header)
	var kept []string
	for i := keepFrom - 1; i >= 0; i-- {
		l := ""
		if i != user {
			l = n.line(i)
		}
		if l == "" {
			continue
		}
		if budget-len(l)-1 < 0 {
			break
		}
		budget -= len(l) + 1
		kept = append(kept, l)
	}
	var b strings.Builder
	b.WriteString(header)
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString("\n")
		b.WriteString(kept[i])
	}
	return tool.TruncateUTF8(b.String(), n.maxChars)
}

func lastUser(msgs []model.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.User {
			return i
		}
	}
	return -1
}
