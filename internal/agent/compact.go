package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// compactPrompt asks the model for the summary that replaces the history.
//
//go:embed compact.md
var compactPrompt string

// ErrNothingToCompact refuses compaction of an empty history.
var ErrNothingToCompact = errors.New("the conversation is empty: there is nothing to compact")

// Compaction is a summary of the history, ready to replace it.
type Compaction struct {
	// Note is the one message that replaces the history, as stored.
	Note json.RawMessage
	// Before and After estimate the next request's tokens; Removed is
	// the number of history messages the note replaces.
	Before, After, Removed int
	Usage                  *proto.Usage
}

// Compact asks the model to summarise the history (manual compaction,
// session.compact): the history, selected to fit the context window as a
// turn's would be, then the fixed compaction request with focus, when
// given, as what the summary must keep. The history is not changed: the
// caller stores Compaction.Note and then makes it the history with
// LoadHistory. A model failure is a *turnFailure-style error whose text
// says why; ErrNothingToCompact when the history is empty. Call it with no
// turn running.
func (s *Session) Compact(ctx context.Context, focus string) (Compaction, error) {
	if len(s.hist.msgs) == 0 {
		return Compaction{}, ErrNothingToCompact
	}
	ask := strings.TrimSpace(compactPrompt)
	if focus = strings.TrimSpace(focus); focus != "" {
		ask += "\n\nThe user asked the summary to focus on: " + focus
	}
	askMsg := model.Message{Role: model.User, Content: ask}
	msgs := append(s.hist.msgs[:len(s.hist.msgs):len(s.hist.msgs)], askMsg)
	metas := append(s.hist.meta[:len(s.hist.meta):len(s.hist.meta)], meta{bytes: messageBytes(askMsg), ok: true})
	sel, err := selectMessages(s.opts.Context, s.fixed, msgs, metas, len(msgs)-1)
	if err != nil {
		return Compaction{}, err
	}
	setup := s.turnModel()
	// The tools are offered as in a turn (a history holding tool calls
	// needs them on some wires); the request says not to call any, and
	// calls in the answer are ignored.
	resp, err := setup.client.Stream(ctx, model.Request{
		Model: setup.model, Instructions: s.opts.SystemPrompt, Messages: sel.msgs, Tools: s.tools,
		ReasoningEffort: setup.effort, MaxOutputTokens: s.opts.Context.ReserveOutputTokens,
	}, func(model.Delta) {})
	if err != nil {
		if ctx.Err() != nil {
			return Compaction{}, fmt.Errorf("compaction cancelled: %w", ctx.Err())
		}
		return Compaction{}, modelFailure(err, s.secrets)
	}
	summary := strings.TrimSpace(resp.Content)
	if summary == "" {
		return Compaction{}, fail(proto.FailResponse, "the model answered the compaction request with no text (%d tool calls, which compaction does not run); the history is unchanged", len(resp.ToolCalls))
	}
	limit := s.opts.Context.SummaryMaxChars
	if limit <= 0 {
		limit = 6000
	}
	if len(summary) > limit {
		summary = tool.TruncateUTF8(summary, limit) + "\n[summary cut to context.summary_max_chars]"
	}
	header := fmt.Sprintf("[context note] The user compacted the conversation: its %d earlier messages were replaced by this summary", len(s.hist.msgs))
	if focus != "" {
		header += " (asked to focus on: " + oneLine(focus, 200) + ")"
	}
	note := model.Message{Role: model.User, Content: header + ".\n\n" + summary}
	raw, err := json.Marshal(storedMessage{Message: note})
	if err != nil {
		return Compaction{}, fmt.Errorf("encode compaction note: %w", err)
	}
	usage := addUsage(nil, resp.Usage)
	setup.cost(usage)
	return Compaction{
		Note: raw, Before: s.ContextTokens(), After: s.fixed + estimate(s.opts.Context, messageBytes(note)),
		Removed: len(s.hist.msgs), Usage: usage,
	}, nil
}

// FailureCode is the turn.failed-style code of an error of Compact, and
// its message; "" when err is not such a failure.
func FailureCode(err error) (code, msg string) {
	var tf *turnFailure
	if errors.As(err, &tf) {
		return tf.code, tf.msg
	}
	return "", ""
}
