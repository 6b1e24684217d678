package acp_test

import (
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

func protoStart(ws string) proto.SessionStart {
	return proto.SessionStart{Cwd: ws, Origin: proto.OriginTUI}
}

func turnStart(sid, prompt string) *proto.TurnStart {
	return &proto.TurnStart{SessionID: sid, Prompt: prompt}
}

// approvalNeeded approves an approval request of the stored turn.
func approvalNeeded(conn *client.Conn, sid string, ev proto.Event) bool {
	e, ok := ev.(*proto.ApprovalRequested)
	if ok {
		_ = conn.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: e.ApprovalID, Approved: true})
	}
	return ok
}

func ended(ev proto.Event) bool {
	switch ev.(type) {
	case *proto.TurnCompleted, *proto.TurnCancelled, *proto.TurnFailed:
		return true
	}
	return false
}
