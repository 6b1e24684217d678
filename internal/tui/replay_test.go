package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// liveTurns plays two turns live into h — text with Markdown, a tool call
// that needed approval, reasoning, a failed turn — and returns them as the
// server stores them: each event line exactly as it was sent.
func liveTurns(t *testing.T, h *harness) []proto.StoredTurn {
	t.Helper()
	r := &liveRecorder{t: t, h: h}
	// Each turn ends 4 s after it began.
	r.begin("t1", "Explain the build")
	r.send(&proto.AssistantReasoning{TurnHeader: th("t1"), Content: "Looking at go.mod"},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: ""},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "go build ./..."})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "bash", Risk: "process", Cwd: "/w", Summary: "go build ./..."})
	h.keys(key('y'))
	r.send(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Summary: "go build ./..."},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: true, Output: `{"exit_code":0,"timed_out":false,"output":"ok\n","truncated":false}`},
		&proto.AssistantDelta{TurnHeader: th("t1"), Content: "The build uses **Go modules**."},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "The build uses **Go modules**:\n\n- `go build`\n- `go test`"})
	r.end(4*time.Second, proto.TurnStateCompleted, &proto.TurnCompleted{TurnHeader: th("t1"), Steps: 2, Usage: &proto.Usage{InputTokens: 3200, OutputTokens: 50, TotalTokens: 3250}, ContextTokens: 3300})
	r.begin("t2", "And the tests?")
	r.send(&proto.AssistantDelta{TurnHeader: th("t2"), Content: "Partial"})
	r.end(4*time.Second, proto.TurnStateFailed, &proto.TurnFailed{TurnHeader: th("t2"), Code: "provider_error", Message: "upstream 502"})
	return r.turns
}

// liveRecorder plays turns live into h and keeps them as the server
// stores them: each event line exactly as it was sent.
type liveRecorder struct {
	t     *testing.T
	h     *harness
	turns []proto.StoredTurn
}

// begin submits prompt and starts turn id with it.
func (r *liveRecorder) begin(id, prompt string) {
	r.turns = append(r.turns, proto.StoredTurn{TurnID: id, N: len(r.turns) + 1, Prompt: prompt, Started: r.h.clk.t.Format(time.RFC3339)})
	r.h.submit(prompt)
	r.send(&proto.TurnStarted{TurnHeader: th(id)})
}

// send plays evs and stores them in the turn begun last.
func (r *liveRecorder) send(evs ...proto.Event) {
	cur := &r.turns[len(r.turns)-1]
	for _, e := range evs {
		r.h.ev(e)
		b, err := proto.EncodeEvent(e)
		if err != nil {
			r.t.Fatal(err)
		}
		cur.Events = append(cur.Events, json.RawMessage(b))
	}
}

// end ends the turn begun last after d more on the clock, in state, with
// its terminal event last.
func (r *liveRecorder) end(d time.Duration, state string, last proto.Event) {
	r.h.clk.t = r.h.clk.t.Add(d)
	cur := &r.turns[len(r.turns)-1]
	cur.State, cur.Ended = state, r.h.clk.t.Format(time.RFC3339)
	r.send(last)
}

// TestResumedTranscriptLooksAsLive: a session redrawn from its stored
// events (session.resumed) renders the same frame as the live session
// that produced them, status line included.
func TestResumedTranscriptLooksAsLive(t *testing.T) {
	live := newHarness(t, func(c *Config) { c.Height = 40 })
	turns := liveTurns(t, live)
	want := live.frame()
	resumed := newHarness(t, func(c *Config) {
		c.Height = 40
		c.Resumed = &proto.SessionResumed{SessionID: "s1", Cwd: sessionStarted.Cwd, Model: sessionStarted.Model,
			ContextMaxTokens: sessionStarted.ContextMaxTokens, Tools: sessionStarted.Tools, Title: "Explain the build", Turns: turns, Seq: 11}
	})
	resumed.clk.t = live.clk.t
	if d := cmp.Diff(want, resumed.frame()); d != "" {
		t.Errorf("the resumed frame differs from the live one (-live +resumed):\n%s", d)
	}
	// Up recalls the stored prompts; rewind offers them.
	resumed.keys(up)
	if got := resumed.m.composer.Value(); got != "And the tests?" {
		t.Errorf("Up after resume = %q, want the last stored prompt", got)
	}
	if len(resumed.rec.take()) != 0 {
		t.Error("replaying sent messages")
	}
}

// TestInterruptedTurnIsMarked: a stored turn without its terminal event
// (its process died) ends the way a live turn ends, open tools cancelled,
// with a notice saying it was interrupted.
func TestInterruptedTurnIsMarked(t *testing.T) {
	line := func(e proto.Event) json.RawMessage {
		e.(proto.SessionEvent).Session().SessionID = "s1"
		b, _ := proto.EncodeEvent(e)
		return b
	}
	h := newHarness(t, func(c *Config) {
		c.Resumed = &proto.SessionResumed{SessionID: "s1", Cwd: "/w", Model: "m", Turns: []proto.StoredTurn{{
			TurnID: "t1", N: 1, Prompt: "run the migration", State: proto.TurnStateInterrupted,
			ErrorCode: "interrupted", ErrorMessage: "the process running this turn stopped before the turn ended",
			Events: []json.RawMessage{line(&proto.TurnStarted{TurnHeader: th("t1")}),
				line(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "make migrate"})}),
				line(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash"})},
		}}}
	})
	f := h.frame()
	assertContains(t, "frame", f, "› run the migration", "make migrate", "cancelled", "turn interrupted: the process running this turn stopped before the turn ended", "ready")
	if h.m.turnID != "" || h.m.ticking {
		t.Errorf("after replay: turn %q, ticking %v; want idle", h.m.turnID, h.m.ticking)
	}
}

// TestSessionPicker: Ctrl+P lists the workspace's sessions, Tab every
// workspace, Enter resumes the chosen one (the transcript is replaced,
// the old session closed), Del asks before deleting.
func TestSessionPicker(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("first session prompt", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	h.rec.take()
	h.keys(ctrlP)
	if d := cmp.Diff([]any{&proto.SessionList{Envelope: proto.Envelope{RequestID: "tui-2"}, Workspace: "/home/ada/project", Limit: pickerListLimit}}, h.rec.take()); d != "" {
		t.Fatalf("Ctrl+P sent (-want +got):\n%s", d)
	}
	now := h.clk.t
	h.ev(req("tui-2", &proto.SessionListed{Sessions: []proto.StoredSession{
		{SessionID: "s1", Title: "first session prompt", Cwd: "/home/ada/project", Turns: 1, Bytes: 900, Updated: now.Format(time.RFC3339)},
		{SessionID: "s0", Title: "Fix the flaky test", Cwd: "/home/ada/project", Turns: 12, Bytes: 340 << 10, Updated: now.Add(-3 * time.Hour).Format(time.RFC3339), LastTurn: "interrupted"},
	}}))
	f := h.frame()
	assertContains(t, "picker frame", f, "Sessions in /home/ada/project · type to filter", "▸ first session prompt", "this session", "Fix the flaky test", "3h ago · 12 turns · 340.0 KiB · interrupted", "no turns", "enter open · tab all dirs · ctrl+a show failed · del delete · esc close")
	h.keys(tabKey)
	if got := h.rec.take(); len(got) != 1 || got[0].(*proto.SessionList).Workspace != "" {
		t.Errorf("Tab sent %+v, want a list of every workspace", got)
	}
	h.ev(req("tui-3", &proto.SessionListed{Sessions: []proto.StoredSession{
		{SessionID: "s1", Title: "first session prompt", Cwd: "/home/ada/project"},
		{SessionID: "s0", Title: "Fix the flaky test", Cwd: "/home/ada/project"},
		{SessionID: "s9", Title: "Elsewhere", Cwd: "/srv/other"},
	}}))
	h.keys(down, down, delKey)
	if !strings.Contains(h.frame(), `delete "Elsewhere" with everything stored of it?`) || len(h.rec.take()) != 0 {
		t.Fatalf("Del did not ask first:\n%s", h.frame())
	}
	h.keys(key('y'))
	if got := h.rec.take(); len(got) != 1 || got[0].(*proto.SessionDelete).SessionID != "s9" {
		t.Fatalf("y sent %+v", got)
	}
	h.ev(req("tui-4", &proto.SessionDeleted{SessionID: "s9"}))
	h.keys(enter) // the cursor stays on the row above the deleted one
	if d := cmp.Diff([]any{&proto.SessionResume{Envelope: proto.Envelope{RequestID: "tui-5"}, SessionID: "s0"}}, h.rec.take()); d != "" {
		t.Fatalf("Enter sent (-want +got):\n%s", d)
	}
	stored := proto.StoredTurn{TurnID: "t9", N: 1, Prompt: "why is TestX flaky?", State: proto.TurnStateCompleted,
		Events: []json.RawMessage{
			json.RawMessage(`{"type":"turn.started","session_id":"s0","seq":1,"turn_id":"t9"}`),
			json.RawMessage(`{"type":"assistant.completed","session_id":"s0","seq":2,"turn_id":"t9","content":"It races on the clock."}`),
			json.RawMessage(`{"type":"turn.completed","session_id":"s0","seq":3,"turn_id":"t9","steps":1,"context_tokens":0}`)}}
	h.ev(req("tui-5", &proto.SessionResumed{SessionID: "s0", Cwd: "/home/ada/project", Model: "gpt-test", Title: "Fix the flaky test", Turns: []proto.StoredTurn{stored}, Seq: 3}))
	f = h.frame()
	if !strings.Contains(f, "why is TestX flaky?") || !strings.Contains(f, "It races on the clock.") || strings.Contains(f, "first session prompt") {
		t.Errorf("after resuming, the frame is not the resumed session's:\n%s", f)
	}
	if d := cmp.Diff([]any{&proto.SessionClose{Envelope: proto.Envelope{RequestID: "tui-6"}, SessionID: "s1"}}, h.rec.take()); d != "" {
		t.Errorf("the old session was not closed (-want +got):\n%s", d)
	}
	h.submit("next")
	if got := h.rec.take(); len(got) != 1 || got[0].(*proto.TurnStart).SessionID != "s0" {
		t.Errorf("a prompt after resuming went to %+v", got)
	}
}

// TestRewind: Ctrl+R lists the earlier prompts; picking one puts it in
// the composer; Enter sends session.fork at that turn, and once the fork
// opens the edited prompt runs there.
func TestRewind(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("first prompt", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	h.prompt("second prompt", "t2")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t2")})
	h.rec.take()
	h.keys(ctrlR)
	f := h.frame()
	if !strings.Contains(f, "Rewind: pick an earlier prompt") || !strings.Contains(f, "▸ second prompt") || !strings.Contains(f, "first prompt") {
		t.Fatalf("rewind picker:\n%s", f)
	}
	h.keys(down, enter)
	if got := h.m.composer.Value(); got != "first prompt" {
		t.Fatalf("composer = %q, want the picked prompt", got)
	}
	if !strings.Contains(h.frame(), "rewinding to turn 1") {
		t.Errorf("status does not say rewinding:\n%s", h.frame())
	}
	h.submit(", edited")
	if d := cmp.Diff([]any{&proto.SessionFork{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", TurnID: "t1", Origin: "tui"}}, h.rec.take()); d != "" {
		t.Fatalf("Enter sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-3", &proto.SessionResumed{SessionID: "s2", Cwd: "/home/ada/project", Model: "gpt-test", ForkedFrom: "s1", ForkedAt: "t1"}))
	want := []any{&proto.SessionClose{Envelope: proto.Envelope{RequestID: "tui-4"}, SessionID: "s1"},
		&proto.TurnStart{Envelope: proto.Envelope{RequestID: "tui-5"}, SessionID: "s2", Prompt: "first prompt, edited"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("after the fork opened (-want +got):\n%s", d)
	}
	if f := h.frame(); strings.Contains(f, "second prompt") || !strings.Contains(f, "forked from s1") {
		t.Errorf("the fork's transcript:\n%s", f)
	}
	// A refused fork gives the edited prompt back.
	h.ev(inSession("s2", &proto.TurnStarted{TurnHeader: th("t3")}), inSession("s2", &proto.TurnCompleted{TurnHeader: th("t3")}))
	h.keys(ctrlR, enter)
	h.submit("!")
	h.rec.take()
	h.ev(req("tui-6", &proto.Error{Code: "store_error", Message: "disk full"}))
	if got := h.m.composer.Value(); got != "first prompt, edited!" || !strings.Contains(h.frame(), "could not open the session (store_error): disk full") {
		t.Errorf("after a refused fork: composer %q\n%s", got, h.frame())
	}
}

// TestResumeKeepsGrantAndUndoNotes: a session whose answer allowed a
// tool for the session and whose turn was undone afterwards redraws both
// notes where the live session showed them: the grant from the stored
// tool.started, the undo after the last turn that had ended by then.
func TestResumeKeepsGrantAndUndoNotes(t *testing.T) {
	live := newHarness(t, func(c *Config) { c.Height = 40 })
	r := &liveRecorder{t: t, h: live}
	end := func(id string) {
		r.end(3*time.Second, proto.TurnStateCompleted, &proto.TurnCompleted{TurnHeader: th(id)})
	}
	diff := &proto.Diff{Path: "notes.txt", Text: "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-old\n+new\n", Added: 1, Removed: 1}
	r.begin("t1", "rewrite the notes")
	r.send(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "write", Arguments: args(map[string]any{"path": "notes.txt"})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "write", Risk: "filesystem", Cwd: "/w",
			Summary: "replace notes.txt (4 bytes)", Diff: diff, Grant: &proto.Grant{Tool: "write", Risk: "filesystem"}})
	live.keys(key('a'))
	r.send(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Granted: &proto.Grant{GrantID: "g1", Tool: "write", Risk: "filesystem"}},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "write", Success: true, Output: `{"path":"notes.txt","bytes":4,"sha256":"x"}`},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Rewritten."})
	end("t1")
	r.begin("t2", "what changed?")
	r.send(&proto.AssistantCompleted{TurnHeader: th("t2"), Content: "Only the notes."})
	end("t2")

	// /undo after the second turn undoes the first (the last that wrote).
	live.clk.t = live.clk.t.Add(5 * time.Second)
	live.rec.take()
	live.submit("/undo")
	files := []proto.UndoFile{{Path: "notes.txt", Action: proto.UndoRestore, Diff: &proto.Diff{Path: "notes.txt", Text: "-new\n+old\n", Added: 1, Removed: 1}}}
	live.ev(req(requestID(t, live.rec.take()), &proto.SessionUndone{TurnID: "t1", DryRun: true, Files: files, Note: proto.UndoNote}))
	live.keys(key('y'))
	live.ev(req(requestID(t, live.rec.take()), &proto.SessionUndone{TurnID: "t1", Files: files, Note: proto.UndoNote}))
	r.turns[0].Undone = &proto.StoredUndo{At: live.clk.t.UTC().Format(time.RFC3339Nano), Files: []proto.UndoFile{{Path: "notes.txt", Action: proto.UndoRestore}}}
	live.clk.t = live.clk.t.Add(5 * time.Second)
	r.begin("t3", "thanks")
	r.send(&proto.AssistantCompleted{TurnHeader: th("t3"), Content: "You are welcome."})
	end("t3")
	want := live.frame()
	for _, note := range []string{"allowed for this session: write calls (risk filesystem)", "undone: 1 file of the last turn", "restored notes.txt"} {
		if !strings.Contains(want, note) {
			t.Fatalf("the live session does not show %q:\n%s", note, want)
		}
	}

	resumed := newHarness(t, func(c *Config) {
		c.Height = 40
		c.Resumed = &proto.SessionResumed{SessionID: "s1", Cwd: sessionStarted.Cwd, Model: sessionStarted.Model,
			ContextMaxTokens: sessionStarted.ContextMaxTokens, Tools: sessionStarted.Tools, Turns: r.turns}
	})
	resumed.clk.t = live.clk.t
	if d := cmp.Diff(want, resumed.frame()); d != "" {
		t.Errorf("the resumed frame differs from the live one (-live +resumed):\n%s", d)
	}
}

// requestID is the request id of the one message sent.
func requestID(t *testing.T, sent []any) string {
	t.Helper()
	if len(sent) != 1 {
		t.Fatalf("sent %v, want one message", sent)
	}
	u, ok := sent[0].(*proto.SessionUndo)
	if !ok {
		t.Fatalf("sent %T, want session.undo", sent[0])
	}
	return u.RequestID
}
