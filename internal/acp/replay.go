package acp

import (
	"fmt"

	"github.com/scv-agent/scv/internal/proto"
)

// replay sends a stored session's turns as session/update notifications,
// oldest first: each prompt as a user_message_chunk, each answer as an
// agent_message_chunk, reasoning as agent_thought_chunk, and each tool
// call as one tool_call with its final status and output.
func (a *Agent) replay(s *session, turns []proto.StoredTurn) error {
	for _, st := range turns {
		for _, u := range replayTurn(st, s.cwd) {
			if err := a.wire.notify(MethodSessionUpdate, sessionNotification{SessionID: s.id, Update: u}); err != nil {
				return err
			}
		}
	}
	return nil
}

// replayTurn is the updates of one stored turn.
func replayTurn(st proto.StoredTurn, cwd string) []any {
	out := []any{chunkUpdate{SessionUpdate: "user_message_chunk", Content: textBlock(st.Prompt)}}
	if st.EventsOmitted {
		return append(out, chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock("[scv: this turn is too large to replay]")})
	}
	t := &turn{calls: map[string]*call{}}
	var order []string
	proposed := map[string]toolCall{}
	done := map[string]bool{}
	for _, line := range st.Events {
		ev, err := proto.DecodeEvent(line)
		if err != nil {
			continue // a type this version does not know
		}
		switch e := ev.(type) {
		case *proto.AssistantCompleted:
			if e.Content != "" {
				out = append(out, chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Content)})
			}
		case *proto.AssistantReasoning:
			out = append(out, chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Content)})
		case *proto.ToolProposed:
			t.calls[e.CallID] = &call{name: e.Name, args: e.Arguments}
			order = append(order, e.CallID)
			proposed[e.CallID] = toolCall{SessionUpdate: "tool_call", ToolCallID: e.CallID, Title: proposedTitle(e.Name, e.Arguments),
				Kind: kindOf(e.Name, ""), Locations: locations(e.Name, e.Arguments, cwd), RawInput: e.Arguments}
		case *proto.ApprovalRequested:
			c := t.call(e.CallID, e.Name)
			c.risk, c.diff = e.Risk, e.Diff
			retitle(proposed, e.CallID, e.Summary, kindOf(e.Name, e.Risk))
		case *proto.ToolStarted:
			c := t.call(e.CallID, e.Name)
			if e.Diff != nil {
				c.diff = e.Diff
			}
			retitle(proposed, e.CallID, e.Summary, "")
		case *proto.ToolCompleted:
			c := t.call(e.CallID, e.Name)
			tc := proposed[e.CallID]
			end := c.completed(e, cwd, "tool_call")
			tc.SessionUpdate, tc.ToolCallID, tc.Status, tc.Content = "tool_call", e.CallID, end.Status, end.Content
			if tc.Title == "" {
				tc.Title = e.Name
			}
			out = append(out, tc)
			done[e.CallID] = true
		case *proto.TurnFailed:
			out = append(out, chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(fmt.Sprintf("[scv: the turn failed (%s): %s]", e.Code, e.Message))})
		}
	}
	// A call the stored turn never finished (the server stopped under it).
	for _, id := range order {
		if !done[id] {
			tc := proposed[id]
			tc.Status = StatusFailed
			out = append(out, tc)
		}
	}
	return out
}

// retitle gives a proposed call SCV's summary as its title (and the kind
// its risk gives, when known).
func retitle(m map[string]toolCall, id, summary, kind string) {
	tc, ok := m[id]
	if !ok {
		return
	}
	if summary != "" {
		tc.Title = clipLine(summary)
	}
	if kind != "" {
		tc.Kind = kind
	}
	m[id] = tc
}
