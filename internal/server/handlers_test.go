package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestEveryMessageTypeHandled sends every client message type the protocol
// package knows, with its fields filled, and requires an answer that is not
// internal_error: a message type added to proto without a case in the
// server's dispatch fails here.
func TestEveryMessageTypeHandled(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("hi"))
	srv, ws := newTestServer(t, fake, "")
	c, _ := connect(t, srv)
	started := startSession(t, c, ws)
	fields, _ := json.Marshal(map[string]any{"session_id": started.SessionID, "cwd": ws, "prompt": "hi", "protocol_version": proto.Version})
	types := proto.MessageTypes()
	// session.close last: the others need the session open.
	types = append(slices.DeleteFunc(types, func(s string) bool { return s == proto.TypeSessionClose }), proto.TypeSessionClose)
	for _, typ := range types {
		msg := proto.NewMessage(typ)
		if err := json.Unmarshal(fields, msg); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		ev, err := c.Call(t.Context(), msg)
		var re *client.RequestError
		switch {
		case errors.As(err, &re) && re.Code == proto.ErrInternal:
			t.Errorf("%s: %v", typ, err)
		case err != nil && re == nil:
			t.Fatalf("%s: %v", typ, err)
		default:
			t.Logf("%s answered by %s", typ, describe(ev, re))
		}
	}
}

func describe(ev proto.Event, re *client.RequestError) string {
	if re != nil {
		return "error " + re.Code
	}
	return fmt.Sprint(ev.EventType())
}

// TestReasonBoundsAgree: the reason bound clients read in proto is the
// one the broker enforces.
func TestReasonBoundsAgree(t *testing.T) {
	if proto.MaxReasonBytes != approval.MaxReasonBytes {
		t.Errorf("proto.MaxReasonBytes %d != approval.MaxReasonBytes %d", proto.MaxReasonBytes, approval.MaxReasonBytes)
	}
}

// TestPromptLimitFromConfig: session.max_prompt_bytes bounds turn.start;
// the refusal names the prompt's size and the limit, and the model is not
// asked.
func TestPromptLimitFromConfig(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("ok"))
	srv, ws := newTestServer(t, fake, "[session]\nmax_prompt_bytes = 10\n")
	c, _ := connect(t, srv)
	started := startSession(t, c, ws)
	if started.MaxPromptBytes != 10 {
		t.Errorf("session.started max_prompt_bytes = %d, want 10 (so a client can check before sending)", started.MaxPromptBytes)
	}
	_, err := c.Call(t.Context(), &proto.TurnStart{SessionID: started.SessionID, Prompt: "twelve bytes"})
	var re *client.RequestError
	if !errors.As(err, &re) || re.Code != proto.ErrInvalidRequest {
		t.Fatalf("turn.start of 12 bytes with a limit of 10: %v, want invalid_request", err)
	}
	want := "prompt is 12 bytes, over the limit of 10 (session.max_prompt_bytes); shorten it"
	if re.Message != want {
		t.Errorf("message %q, want %q", re.Message, want)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}
