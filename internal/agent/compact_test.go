package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

func TestCompactReplacesHistoryWithTheModelsSummary(t *testing.T) {
	var order []string
	long := strings.Repeat("output ", 500) // a tool result the summary is far shorter than
	fm := &fakeModel{script: []step{
		calls(call("c1", "echo", `{"text":"`+long+`"}`)),
		text("first answer"),
		text("SUMMARY: the user wants a parser; echo ran"),
		text("after compaction"),
	}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "write a parser", rec.emit)
	before := s.HistoryLen()
	if before != 4 {
		t.Fatalf("history has %d messages after the turn, want 4", before)
	}
	c, err := s.Compact(t.Context(), "  the parser  ")
	if err != nil {
		t.Fatal(err)
	}
	if s.HistoryLen() != before {
		t.Fatalf("Compact changed the history (%d messages, want %d): the caller applies it", s.HistoryLen(), before)
	}
	req := fm.requests[2]
	last := req.Messages[len(req.Messages)-1]
	if last.Role != model.User || !strings.Contains(last.Content, "compact this conversation") ||
		!strings.HasSuffix(last.Content, "focus on: the parser") {
		t.Errorf("the compaction request ends with %q: want the compaction prompt and the focus", last.Content)
	}
	if len(req.Messages) != before+1 || req.Messages[0].Content != "write a parser" {
		t.Errorf("the compaction request sent %d messages, want the %d of the history and the request", len(req.Messages), before+1)
	}
	if c.Removed != before || c.After >= c.Before || c.Before != s.ContextTokens() || c.Usage == nil || c.Usage.TotalTokens != 12 {
		t.Errorf("compaction = %+v (context now %d): want %d removed, fewer tokens after, the request's usage", c, s.ContextTokens(), before)
	}
	if err := s.LoadHistory([]json.RawMessage{c.Note}); err != nil {
		t.Fatal(err)
	}
	s.RunTurn(t.Context(), "t2", "go on", rec.emit)
	next := fm.requests[3].Messages
	if len(next) != 2 || !strings.Contains(next[0].Content, "[context note] The user compacted the conversation: its 4 earlier messages") ||
		!strings.Contains(next[0].Content, "SUMMARY: the user wants a parser") || next[1].Content != "go on" {
		t.Errorf("the next turn sent %+v: want the summary note, then the prompt", next)
	}
}

func TestCompactRefusals(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{text("answer"), failWith(model.CodeProvider), calls(call("c1", "echo", `{"text":"a"}`))}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	if _, err := s.Compact(t.Context(), ""); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("Compact of an empty history = %v, want ErrNothingToCompact", err)
	}
	s.RunTurn(t.Context(), "t1", "hi", (&recorder{}).emit)
	_, err := s.Compact(t.Context(), "")
	if code, msg := FailureCode(err); code != proto.FailProvider || !strings.Contains(msg, "boom") {
		t.Errorf("Compact with a failing model = %v (%s), want provider_error with its message", err, code)
	}
	_, err = s.Compact(t.Context(), "")
	if code, msg := FailureCode(err); code != proto.FailResponse || !strings.Contains(msg, "no text") {
		t.Errorf("Compact answered by tool calls only = %v, want response_limit saying there was no text", err)
	}
	if s.HistoryLen() != 2 || len(order) != 0 {
		t.Errorf("history %d messages, tools run %v: refusals must change nothing and run no tool", s.HistoryLen(), order)
	}
}

// A summary longer than context.summary_max_chars is cut to it.
func TestCompactBoundsTheSummary(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{text("answer"), text(strings.Repeat("long ", 1000))}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.RunTurn(t.Context(), "t1", "hi", (&recorder{}).emit)
	c, err := s.Compact(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var m storedMessage
	if err := json.Unmarshal(c.Note, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Content) > 600+300 || !strings.Contains(m.Content, "[summary cut to context.summary_max_chars]") {
		t.Errorf("note of %d bytes: want the summary cut to 600 and marked", len(m.Content))
	}
}
