package acp

import (
	"context"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// Plan mode and the todo list over ACP (docs/acp.md): "plan" is one more
// session mode beside the approval policies, and the todo list the model
// keeps is the protocol's plan update.

// planMode is the mode that puts the session in SCV's plan mode; the
// approval policy stays as it was.
var planMode = sessionMode{ID: "plan", Name: "Plan", Description: "read-only tools only; the agent answers with a plan instead of making changes"}

// planEntry is one entry of a plan update.
type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

// planOf is the plan update of a todo list. SCV's items have no priority:
// every entry is "medium". The statuses are the same words.
func planOf(items []proto.TodoItem) planUpdate {
	u := planUpdate{SessionUpdate: "plan", Entries: []planEntry{}}
	for _, it := range items {
		u.Entries = append(u.Entries, planEntry{Content: it.Content, Priority: "medium", Status: it.Status})
	}
	return u
}

// selectMode makes modeID the session's mode: "plan" sets SCV's plan mode;
// an approval policy sets that policy and leaves plan mode. field names
// the ACP field a refusal is about.
func (a *Agent) selectMode(s *session, modeID, field string) *rpcError {
	if modeID != planMode.ID {
		if rerr := a.configure(s, &proto.SessionConfigure{SessionID: s.id, ApprovalPolicy: modeID}, field); rerr != nil {
			return rerr
		}
	}
	s.mu.Lock()
	planning := s.plan
	s.mu.Unlock()
	want := modeID == planMode.ID
	if planning == want {
		return nil
	}
	mode := proto.ModeDefault
	if want {
		mode = proto.ModePlan
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if _, err := client.CallFor[*proto.SessionMode](ctx, a.conn, &proto.SessionSetMode{SessionID: s.id, Mode: mode}); err != nil {
		return serverError(field, err)
	}
	s.mu.Lock()
	s.plan = want
	s.mu.Unlock()
	return nil
}

// currentMode is the id of the session's mode. Called with s.mu held.
func (s *session) currentMode() string {
	if s.plan {
		return planMode.ID
	}
	return s.policy
}
