package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// connect serves one connection of srv and returns its initialized
// client; closing the client (EOF) ends the connection, which the test's
// cleanup waits for.
func connect(t testing.TB, srv *server.Server) (*client.Conn, func()) {
	t.Helper()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan struct{})
	go func() { srv.Serve(context.Background(), cr, sw); sw.Close(); close(done) }()
	c := client.NewConn(sr, cw)
	if _, err := c.Initialize(t.Context(), "t", "0"); err != nil {
		t.Fatal(err)
	}
	end := func() { cw.Close(); <-done; c.Close() }
	t.Cleanup(end)
	return c, end
}

// startSession starts a session in ws; an error fails the test.
func startSession(t testing.TB, c *client.Conn, ws string) *proto.SessionStarted {
	t.Helper()
	started, err := c.StartSession(t.Context(), proto.SessionStart{Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	return started
}

// resume resumes the stored session sid on c; an error fails the test.
func resume(t testing.TB, c *client.Conn, sid string) *proto.SessionResumed {
	t.Helper()
	res, err := client.CallFor[*proto.SessionResumed](t.Context(), c, &proto.SessionResume{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// turn runs one prompt to its terminal event and returns that event.
func turn(t testing.TB, c *client.Conn, sid, prompt string) proto.Event {
	t.Helper()
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("connection ended: %v", c.Err())
			}
			switch ev.(type) {
			case *proto.TurnCompleted, *proto.TurnFailed, *proto.TurnCancelled:
				return ev
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no terminal event within 20 s")
		}
	}
}

// input is the conversation part of a recorded Responses request.
func input(t *testing.T, r modeltest.Recorded) string {
	t.Helper()
	b, err := json.Marshal(r.Body["input"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResumeContinuesTheConversation: a session left (its connection
// ended) and resumed on a new connection sends the model exactly the
// conversation a session that never stopped sends, tool calls and results
// included.
func TestResumeContinuesTheConversation(t *testing.T) {
	script := func(fake *modeltest.Server) {
		fake.Script(modeltest.ToolCall("c1", "read", `{"path":"a.txt"}`))
		fake.Script(modeltest.Text("it says alpha"))
		fake.Script(modeltest.Text("second"))
		fake.Script(modeltest.Text("third"))
	}
	run := func(resumed bool) string {
		fake := modeltest.New(t)
		script(fake)
		srv, ws := newTestServer(t, fake, "[tools]\napproval_policy = \"never\"\n")
		writeFile(t, ws, "a.txt", "alpha\n")
		c, end := connect(t, srv)
		started := startSession(t, c, ws)
		sid := started.SessionID
		turn(t, c, sid, "read a.txt")
		turn(t, c, sid, "and?")
		if resumed {
			end()
			c, _ = connect(t, srv)
			ev := resume(t, c, sid)
			if len(ev.Turns) != 2 || ev.Turns[0].Prompt != "read a.txt" || ev.Seq == 0 {
				t.Fatalf("session.resumed turns = %+v, seq %d", ev.Turns, ev.Seq)
			}
		}
		if _, ok := turn(t, c, sid, "once more").(*proto.TurnCompleted); !ok {
			t.Fatal("the third turn did not complete")
		}
		reqs := fake.Requests()
		return input(t, reqs[len(reqs)-1])
	}
	live, resumed := run(false), run(true)
	for _, want := range []string{"read a.txt", "it says alpha", `alpha\\n`, "and?", "second", "once more"} {
		if !strings.Contains(live, want) {
			t.Fatalf("the live request lacks %q (test setup):\n%s", want, live)
		}
	}
	if d := cmp.Diff(live, resumed); d != "" {
		t.Errorf("the resumed session sends another conversation (-live +resumed):\n%s", d)
	}
}

// TestForkRewindsTheHistory: the fork's next request holds the turns
// before the fork point and the edited prompt, nothing of the turn it
// replaces; the original goes on with its whole history.
func TestForkRewindsTheHistory(t *testing.T) {
	fake := modeltest.New(t)
	for _, a := range []string{"first answer", "second answer", "edited answer", "original goes on"} {
		fake.Script(modeltest.Text(a))
	}
	srv, ws := newTestServer(t, fake, "")
	c, _ := connect(t, srv)
	started := startSession(t, c, ws)
	turn(t, c, started.SessionID, "first prompt")
	turn(t, c, started.SessionID, "second prompt")
	list, err := client.CallFor[*proto.SessionTurnsReply](t.Context(), c, &proto.SessionTurnsRequest{SessionID: started.SessionID})
	if err != nil || len(list.Turns) != 2 {
		t.Fatalf("session.turns = %+v, %v", list, err)
	}
	fork, err := client.CallFor[*proto.SessionResumed](t.Context(), c, &proto.SessionFork{SessionID: started.SessionID, TurnID: list.Turns[1].TurnID})
	if err != nil {
		t.Fatal(err)
	}
	if fork.SessionID == started.SessionID || fork.ForkedFrom != started.SessionID || len(fork.Turns) != 1 {
		t.Fatalf("fork = %+v", fork)
	}
	turn(t, c, fork.SessionID, "second prompt, edited")
	reqs := fake.Requests()
	got := input(t, reqs[2])
	for _, want := range []string{"first prompt", "first answer", "second prompt, edited"} {
		if !strings.Contains(got, want) {
			t.Errorf("the fork's request lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "second answer") || strings.Contains(got, `"second prompt"`) {
		t.Errorf("the fork's request holds the turn it rewound:\n%s", got)
	}
	turn(t, c, started.SessionID, "third prompt")
	if got := input(t, fake.Requests()[3]); !strings.Contains(got, "second answer") || strings.Contains(got, "edited") {
		t.Errorf("the original's history changed:\n%s", got)
	}
}

// TestSessionOpenOnOneConnection: a session open on one connection is
// session_busy to a resume or delete from another, which names where it
// is open; once closed there, the other connection resumes it.
func TestSessionOpenOnOneConnection(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("hi"))
	srv, ws := newTestServer(t, fake, "")
	a, endA := connect(t, srv)
	started, err := a.StartSession(t.Context(), proto.SessionStart{Cwd: ws, Origin: proto.OriginTUI})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, a, started.SessionID, "hello")
	b, _ := connect(t, srv)
	for _, msg := range []proto.Message{&proto.SessionResume{SessionID: started.SessionID}, &proto.SessionDelete{SessionID: started.SessionID}} {
		_, err = b.Call(t.Context(), msg)
		var re *client.RequestError
		if !errors.As(err, &re) || re.Code != proto.ErrSessionBusy || !strings.Contains(re.Message, "another connection") || !strings.Contains(re.Message, "tui client") {
			t.Fatalf("%s from another connection: %v, want session_busy naming the connection and origin", msg.MessageType(), err)
		}
	}
	endA()
	ev, err := client.CallFor[*proto.SessionResumed](t.Context(), b, &proto.SessionResume{SessionID: started.SessionID})
	if err != nil || len(ev.Turns) != 1 {
		t.Fatalf("resume after the first connection ended: %+v, %v", ev, err)
	}
}

// TestResumedSessionFitsAFrame: a session whose turns exceed the server
// frame is resumed with the newest turns that fit and a cursor to the
// rest, and session.turns pages back through every turn.
func TestResumedSessionFitsAFrame(t *testing.T) {
	fake := modeltest.New(t)
	big := strings.Repeat("x", 3000)
	for range 12 {
		fake.Script(modeltest.Text(big))
	}
	srv, ws := newTestServerFrame(t, fake, 16<<10)
	c, end := connect(t, srv)
	started := startSession(t, c, ws)
	for i := range 12 {
		turn(t, c, started.SessionID, "prompt "+string(rune('a'+i)))
	}
	end()
	c, _ = connect(t, srv)
	ev := resume(t, c, started.SessionID)
	if len(ev.Turns) == 0 || len(ev.Turns) >= 12 || ev.Before != ev.Turns[0].N {
		t.Fatalf("resumed %d turns with before %d; want the newest that fit and a cursor", len(ev.Turns), ev.Before)
	}
	seen := len(ev.Turns)
	for before := ev.Before; before > 0; {
		page, err := client.CallFor[*proto.SessionTurnsReply](t.Context(), c, &proto.SessionTurnsRequest{SessionID: started.SessionID, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Turns) == 0 {
			t.Fatalf("empty page before %d", before)
		}
		seen += len(page.Turns)
		before = page.Before
	}
	if seen != 12 {
		t.Errorf("paging saw %d turns, want 12", seen)
	}
}
