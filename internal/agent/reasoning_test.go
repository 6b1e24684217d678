package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// Reasoning reaches clients as assistant.reasoning and never the answer;
// signed thinking blocks go back to the model during the tool loop of
// their turn and leave the history once the turn is answered.
func TestReasoningAndThinkingBlocks(t *testing.T) {
	think := []model.Thinking{{Text: "plan the call", Signature: "sig-1"}, {Redacted: "opaque"}}
	fm := &fakeModel{script: []step{
		func(_ context.Context, on func(model.Delta)) (model.Response, error) {
			on(model.Delta{Kind: model.DeltaReasoning, Text: "plan the call"})
			return model.Response{ToolCalls: []model.ToolCall{call("c1", "echo", `{"text":"a"}`)}, Thinking: think}, nil
		},
		func(_ context.Context, on func(model.Delta)) (model.Response, error) {
			on(model.Delta{Kind: model.DeltaReasoning, Text: "now answer"})
			on(model.Delta{Text: "answer"})
			return model.Response{Content: "answer", Thinking: []model.Thinking{{Text: "now answer", Signature: "sig-2"}}}, nil
		},
		text("second"),
	}}
	var order []string
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	var got []string
	for _, e := range rec.evs {
		switch e := e.(type) {
		case *proto.AssistantReasoning:
			got = append(got, e.EventType()+":"+e.Content)
		case *proto.AssistantDelta:
			got = append(got, e.EventType()+":"+e.Content)
		case *proto.AssistantCompleted:
			got = append(got, e.EventType()+":"+e.Content)
		}
	}
	want := []string{"assistant.reasoning:plan the call", "assistant.completed:", "assistant.reasoning:now answer", "assistant.delta:answer", "assistant.completed:answer"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events with content (-want +got):\n%s", d)
	}
	if rec.last().EventType() != proto.EventTurnCompleted {
		t.Fatalf("turn ended with %s", rec.last().EventType())
	}
	if d := cmp.Diff(think, fm.requests[1].Messages[1].Thinking); d != "" {
		t.Errorf("thinking replayed in the tool loop (-want +got):\n%s", d)
	}
	before := s.hist.bytes
	s.RunTurn(t.Context(), "t2", "again", rec.emit)
	for i, m := range fm.requests[2].Messages {
		if len(m.Thinking) != 0 {
			t.Errorf("next turn's request still carries thinking in message %d: %+v", i, m.Thinking)
		}
	}
	sum := 0
	for _, m := range s.hist.meta {
		sum += m.bytes
	}
	if sum != s.hist.bytes || s.hist.bytes <= before {
		t.Errorf("history bytes %d, sum of messages %d (before the second turn %d)", s.hist.bytes, sum, before)
	}
	if fm.requests[0].MaxOutputTokens != 100 {
		t.Errorf("MaxOutputTokens = %d, want context.reserve_output_tokens (100)", fm.requests[0].MaxOutputTokens)
	}
}
