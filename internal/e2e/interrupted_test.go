package e2e

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestInterruptedTurnStaysInContext: a turn cancelled while its bash call
// runs stays in the session's history — its prompt, the call and what it
// reported, and the note "[interrupted by the user]" — so the next request
// carries them; and the store keeps it, so a resume in a new daemon does
// too.
func TestInterruptedTurnStaysInContext(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI}).SessionID
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo partial-output-7; sleep 30"}`))
	sendTurn(t, c, sid, "start the long job")
	appr := approveNext(t, c, sid)
	until(t, c, proto.EventToolStarted)
	if err := c.Send(&proto.TurnCancel{SessionID: sid, TurnID: appr.TurnID}); err != nil {
		t.Fatal(err)
	}
	until(t, c, proto.EventTurnCancelled)

	check := func(step string) {
		t.Helper()
		reqs := fm.Requests()
		raw := string(reqs[len(reqs)-1].Raw)
		for _, want := range []string{"start the long job", "echo partial-output-7; sleep 30", "[interrupted by the user]", "what happened?"} {
			if !strings.Contains(raw, want) {
				t.Errorf("%s: the request lacks %q:\n%s", step, want, raw)
			}
		}
		if got := userTexts(reqs[len(reqs)-1]); len(got) < 3 || got[0] != "start the long job" || got[1] != "[interrupted by the user]" {
			t.Errorf("%s: user messages %q, want the interrupted prompt, the note, then the new prompt", step, got)
		}
	}
	fm.Script(modeltest.Text("it was interrupted"))
	sendTurn(t, c, sid, "what happened?")
	until(t, c, proto.EventTurnCompleted)
	check("same session")
	c.Close()

	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: exit %d %s", r.code, r.stderr)
	}
	in.startDaemon(in.env)
	c = in.connect()
	resume(t, c, sid)
	fm.Script(modeltest.Text("still known"))
	sendTurn(t, c, sid, "what happened?")
	until(t, c, proto.EventTurnCompleted)
	check("resumed in a new daemon")
}
