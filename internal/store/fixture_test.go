package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestWriteFixture makes the code write testdata/v<SchemaVersion>.db: the
// database a user of this schema version would have. Run it once when a
// version is released (before its successor's migration is written) and
// commit the file; migration tests open every older fixture. -update writes
// only a fixture that does not exist yet: a released version's file is never
// rewritten (delete it first to replace it on purpose).
//
//	go test ./internal/store -run TestWriteFixture -update
func TestWriteFixture(t *testing.T) {
	if !testutil.Update() {
		t.Skip("run with -update to write testdata/v<schema>.db")
	}
	out := filepath.Join("testdata", fmt.Sprintf("v%d.db", SchemaVersion()))
	if _, err := os.Stat(out); err == nil {
		t.Skipf("%s exists; a released fixture is not rewritten (remove it to write it again)", out)
	}
	tmp := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, tmp, nil)
	fillFixture(t, s)
	if !s.Checkpoint(context.Background()) {
		t.Fatal("checkpoint incomplete")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(b))
}

// fillFixture writes what every fixture holds (checkFixture reads it back):
//   - "fx-a": three completed turns, then a failed one; renamed.
//   - "fx-b": one completed turn and one left running under the lease of
//     a process that is gone (pid 4242).
//   - "fx-c": a fork of fx-a at its third turn.
//   - (from schema 3) bridge account "fx": bound to "fp-fx", cursor
//     "fx-cursor", messages 1 (claimed, left in flight), 2 (completed
//     with a reply of two chunks) and 3 (seen only), and the session of
//     user "alice" (fx-a).
//   - (from schema 5) every session's endpoint: wire "chat", base URL
//     "http://relay.example/v1" (the fork fx-c copies fx-a's).
//   - (from schema 6) "fx-i" in workspace /home/u/pictures: one completed
//     turn "i1" whose prompt carried two images (fixtureImages).
//   - (from schema 7) fx-a in plan mode with a todo list of two items.
//   - (from schema 9) fx-a's conversation codex-1 (thread "th-fx", two
//     turns) and its closed claude-1 (evicted).
func fillFixture(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	mk := func(id string, o Origin) {
		if _, err := s.CreateSession(ctx, NewSession{ID: id, Workspace: "/home/u/project", Provider: "openai", Model: "gpt-test",
			WireAPI: fixtureWire, BaseURL: fixtureBaseURL, Origin: o, DelegationDepth: 0}); err != nil {
			t.Fatal(err)
		}
	}
	mk("fx-a", OriginTUI)
	var seq uint64
	for i := 1; i <= 3; i++ {
		seq = runTurn(t, s, "fx-a", fmt.Sprint("a", i), fmt.Sprintf("fixture prompt %d about quokkas", i), fmt.Sprintf("fixture answer %d about wombats", i), seq)
	}
	tl, err := s.BeginTurn(ctx, "fx-a", "a4", "fixture prompt 4 that fails")
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.End(ctx, TurnEnd{State: TurnFailed, Code: "provider_error", Message: "HTTP 500", Events: []Event{ev(seq+1, "turn.failed", "")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, "fx-a", "Quokka research"); err != nil {
		t.Fatal(err)
	}
	mk("fx-b", OriginExec)
	if err := s.Release(ctx, "fx-b"); err != nil {
		t.Fatal(err)
	}
	gone := openAt(t, s.Path(), func(o *Options) { o.Holder = Holder{Instance: "/home/u/.scv", PID: 4242, Start: 1, Name: "scv exec"} })
	if _, err := gone.Acquire(ctx, "fx-b"); err != nil {
		t.Fatal(err)
	}
	seq = runTurn(t, gone, "fx-b", "b1", "fixture prompt about numbats", "numbat answer", 0)
	startTurn(t, gone, "fx-b", "b2", "fixture prompt left running", seq)
	gone.Close()
	if _, err := s.Fork(ctx, "fx-a", "a3", "fx-c", OriginTUI); err != nil {
		t.Fatal(err)
	}
	fillBridgeFixture(t, s)
	fillImageFixture(t, s)
	if err := s.SetMode(ctx, "fx-a", ModePlan); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTodos(ctx, "fx-a", fixtureTodos); err != nil {
		t.Fatal(err)
	}
	for _, c := range fixtureConversations {
		if err := s.PutAgentConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// The writing process ends cleanly, except the one holding fx-b.
	if err := s.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
}

// The endpoint of the fixture's sessions (schema 5 on).
const (
	fixtureWire    = "chat"
	fixtureBaseURL = "http://relay.example/v1"
)

var fixtureUsed = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func fillBridgeFixture(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.BridgeBind(ctx, "fx", "fp-fx"); err != nil {
		t.Fatal(err)
	}
	msgs := []BridgeMessage{
		{ID: "1", Claim: true, Recipient: "alice", ContextToken: "tok-1"},
		{ID: "2", Claim: true, Recipient: "bob", ContextToken: "tok-2", GroupID: "g"},
		{ID: "3"},
	}
	if _, err := s.BridgeAccept(ctx, "fx", BridgeBatch{Messages: msgs, Cursor: "fx-cursor"}); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeComplete(ctx, "fx", "2", []BridgeChunk{{N: 0, ClientID: "c-0", Text: "one"}, {N: 1, ClientID: "c-1", Text: "two"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeSetSession(ctx, "fx", BridgeSession{UserID: "alice", SessionID: "fx-a", NoTools: true, Used: fixtureUsed}); err != nil {
		t.Fatal(err)
	}
}

// checkBridgeFixture checks the bridge state of a fixture written at
// schema version v (none before 3), then that the state works.
func checkBridgeFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	st, err := s.BridgeState(ctx, "fx")
	if err != nil {
		t.Fatal(err)
	}
	if v >= 3 {
		if st.Fingerprint != "fp-fx" || st.Cursor != "fx-cursor" || len(st.Claims) != 1 || st.Claims[0].MessageID != "1" ||
			len(st.Replies) != 1 || len(st.Replies[0].Chunks) != 2 || st.Replies[0].Chunks[1].ClientID != "c-1" || st.Replies[0].Recipient != "bob" {
			t.Errorf("bridge state of the fixture = %+v", st)
		}
		if seen, err := s.BridgeSeen(ctx, "fx", "3"); err != nil || !seen {
			t.Errorf("message 3 seen = %v, %v", seen, err)
		}
		if x, err := s.BridgeSession(ctx, "fx", "", "alice"); err != nil || x.SessionID != "fx-a" || !x.NoTools || !x.Used.Equal(fixtureUsed) {
			t.Errorf("alice's session = %+v, %v", x, err)
		}
		if err := s.BridgeComplete(ctx, "fx", "1", []BridgeChunk{{ClientID: "c-r", Text: "restarted"}}); err != nil {
			t.Errorf("complete the fixture's claim: %v", err)
		}
	} else if st.Fingerprint != "" || st.Cursor != "" || len(st.Claims)+len(st.Replies) != 0 {
		t.Errorf("bridge state of a version %d fixture = %+v, want none", v, st)
	}
	claims, err := s.BridgeAccept(ctx, "fx", BridgeBatch{Messages: []BridgeMessage{{ID: "3", Claim: true, Recipient: "x", ContextToken: "t"}, {ID: "4", Claim: true, Recipient: "x", ContextToken: "t"}}, Cursor: "next"})
	if err != nil {
		t.Fatal(err)
	}
	want := 1 // message 3 was seen at version 3
	if v < 3 {
		want = 2
	}
	if len(claims) != want {
		t.Errorf("claims after migration = %+v, want %d", claims, want)
	}
}

// fixtureAlive says the fixture's lease holder (pid 4242) is gone.
func fixtureAlive(h Holder) bool { return h.PID != 4242 }

// checkFixture verifies a migrated fixture, written at schema version v,
// through the current API, including that it can be resumed and written.
func checkFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	p, err := s.ListSessions(ctx, ListOptions{Workspace: "/home/u/project"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 3 {
		t.Fatalf("%d sessions, want 3", len(p.Sessions))
	}
	a, err := s.Load(ctx, "fx-a", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Session.Title != "Quokka research" || len(a.Turns) != 4 || a.Turns[3].State != TurnFailed || len(a.History) != 6 || a.Session.LastSeq != 10 {
		t.Errorf("fx-a: title %q, %d turns, history %d, last seq %d", a.Session.Title, len(a.Turns), len(a.History), a.Session.LastSeq)
	}
	var m struct{ Content string }
	if err := json.Unmarshal(a.History[5], &m); err != nil || m.Content != "fixture answer 3 about wombats" {
		t.Errorf("fx-a last message = %s (%v)", a.History[5], err)
	}
	c, err := s.Load(ctx, "fx-c", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Session.ForkedFrom != "fx-a" || c.Session.ForkedAt != "a3" || len(c.History) != 4 || len(c.Turns) != 2 {
		t.Errorf("fx-c: %+v, history %d, turns %d", c.Session, len(c.History), len(c.Turns))
	}
	// Search finds text written before the index existed (schema 1).
	hits, err := s.Search(ctx, "wombats", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// fx-a's three answers and the two copied into the fork fx-c.
	if len(hits) != 5 || hits[0].Field != "answer" || !strings.HasPrefix(hits[0].Line, "fixture answer") {
		t.Errorf("search wombats: %+v", hits)
	}
	if hits, err := s.Search(ctx, "numbat", SearchOptions{}); err != nil || len(hits) != 1 || hits[0].SessionID != "fx-b" || hits[0].Field != "prompt" {
		t.Errorf("search numbat: %+v, %v", hits, err)
	}
	// The process holding fx-b is gone: its running turn is interrupted.
	r, err := s.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r != (Recovery{Turns: 1, Leases: 1}) {
		t.Errorf("recovery = %+v", r)
	}
	b2, err := s.Turn(ctx, "fx-b", "b2")
	if err != nil {
		t.Fatal(err)
	}
	if b2.State != TurnInterrupted || len(b2.Events) != 1 {
		t.Errorf("fx-b running turn after recovery = %+v", b2)
	}
	// Resume: take the sessions and run turns.
	if _, err := s.Acquire(ctx, "fx-c"); err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, "fx-c", "c3", "fork goes on", "fine", c.Session.LastSeq)
	if _, err := s.Acquire(ctx, "fx-b"); err != nil {
		t.Fatal(err)
	}
	b, err := s.Session(ctx, "fx-b")
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, "fx-b", "b3", "after migration", "still works", b.LastSeq)
	if h, _ := s.History(ctx, "fx-b"); len(h) != 4 {
		t.Errorf("fx-b history after a new turn: %d messages, want 4", len(h))
	}
	checkBridgeFixture(t, s, v)
	checkEndpointFixture(t, s, v)
	checkImageFixture(t, s, v)
}

// fixtureImages are the images of fx-i's turn (schema 6 on).
var fixtureImages = []Image{
	{Path: "/home/u/pictures/shot.png", MediaType: "image/png", Size: 123456, SHA256: strings.Repeat("ab", 32)},
	{Path: "/home/u/pictures/cat.jpg", MediaType: "image/jpeg", Size: 7890, SHA256: strings.Repeat("cd", 32)},
}

func fillImageFixture(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, NewSession{ID: "fx-i", Workspace: "/home/u/pictures", Provider: "openai", Model: "gpt-test", Origin: OriginExec}); err != nil {
		t.Fatal(err)
	}
	tl, err := s.BeginTurnImages(ctx, "fx-i", "i1", "what is in these pictures?", fixtureImages)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Complete(ctx, Completion{Events: []Event{ev(1, "turn.completed", "")}, Answer: "a cat"}); err != nil {
		t.Fatal(err)
	}
}

// checkImageFixture checks the turn images of a fixture written at schema
// version v (none before 6), then that a migrated file records them, and
// that a fork copies them.
func checkImageFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	if v >= 6 {
		tr, err := s.Turn(ctx, "fx-i", "i1")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fixtureImages, tr.Images); d != "" {
			t.Errorf("fx-i's images (-want +got):\n%s", d)
		}
	} else if _, err := s.Session(ctx, "fx-i"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a version %d fixture has session fx-i: %v", v, err)
	}
	if _, err := s.Acquire(ctx, "fx-a"); err != nil {
		t.Fatal(err)
	}
	x, err := s.Session(ctx, "fx-a")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := s.BeginTurnImages(ctx, "fx-a", "a9", "look", fixtureImages[1:])
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Complete(ctx, Completion{Events: []Event{ev(x.LastSeq+1, "turn.completed", "")}}); err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, "fx-a", "a10", "after the picture", "ok", x.LastSeq+1)
	// A fork at a10 copies the turns before it, a9 among them.
	f, err := s.Fork(ctx, "fx-a", "a10", "fx-j", OriginTUI)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"fx-a", f.ID} {
		tr, err := s.Turn(ctx, id, "a9")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fixtureImages[1:], tr.Images); d != "" {
			t.Errorf("%s turn a9's images (-want +got):\n%s", id, d)
		}
	}
	checkPlanFixture(t, s, v)
	checkConversationFixture(t, s, v)
}

// fixtureTodos is fx-a's todo list (schema 7 on).
var fixtureTodos = []TodoItem{{Content: "read the quokka notes", Status: "completed"}, {Content: "count the wombats", Status: "in_progress"}}

// checkPlanFixture checks the sessions' modes and todo lists of a fixture
// written at schema version v (none before 7), then that both can be
// recorded.
func checkPlanFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"fx-a", "fx-b", "fx-c"} {
		x, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		items, err := s.Todos(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantMode, wantTodos := ModeDefault, []TodoItem{}
		if v >= 7 && id == "fx-a" {
			wantMode, wantTodos = ModePlan, fixtureTodos
		}
		if x.Mode != wantMode {
			t.Errorf("%s mode = %q, want %q", id, x.Mode, wantMode)
		}
		if d := cmp.Diff(wantTodos, items); d != "" {
			t.Errorf("%s todos (-want +got):\n%s", id, d)
		}
	}
	if err := s.SetMode(ctx, "fx-b", ModePlan); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(ctx, "fx-b", "sketch"); err == nil || !strings.Contains(err.Error(), `mode "sketch" is not default or plan`) {
		t.Errorf("SetMode(sketch) = %v", err)
	}
	if err := s.SetTodos(ctx, "fx-b", fixtureTodos[:1]); err != nil {
		t.Fatal(err)
	}
	x, err := s.Session(ctx, "fx-b")
	if err != nil {
		t.Fatal(err)
	}
	items, err := s.Todos(ctx, "fx-b")
	if err != nil {
		t.Fatal(err)
	}
	if x.Mode != ModePlan || !cmp.Equal(items, fixtureTodos[:1]) {
		t.Errorf("fx-b after SetMode and SetTodos: mode %q, todos %+v", x.Mode, items)
	}
	if err := s.SetMode(ctx, "nope", ModePlan); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetMode of an unknown session = %v", err)
	}
	if _, err := s.Todos(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Todos of an unknown session = %v", err)
	}
}

// fixtureConversations are fx-a's conversations (schema 9 on).
var fixtureConversations = []AgentConversation{
	{SessionID: "fx-a", Handle: "codex-1", Agent: "codex", N: 1, Cwd: "/home/u/project", VendorID: "th-fx", Turns: 2,
		Created: fixtureUsed, Used: fixtureUsed.Add(time.Minute)},
	{SessionID: "fx-a", Handle: "claude-1", Agent: "claude", N: 1, Cwd: "/home/u/project/sub", Turns: 1,
		Created: fixtureUsed.Add(2 * time.Minute), Used: fixtureUsed.Add(2 * time.Minute), Closed: fixtureUsed.Add(time.Hour), ClosedWhy: "evicted"},
}

// checkConversationFixture checks the conversations of a fixture written
// at schema version v (none before 9), then that one can be recorded.
func checkConversationFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	got, err := s.AgentConversations(ctx, "fx-a")
	if err != nil {
		t.Fatal(err)
	}
	var want []AgentConversation
	if v >= 9 {
		want = fixtureConversations
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("fx-a's conversations (-want +got):\n%s", diff)
	}
	c := AgentConversation{SessionID: "fx-b", Handle: "pi-1", Agent: "pi", N: 1, Cwd: "/w", VendorID: "v", Turns: 1, Created: fixtureUsed, Used: fixtureUsed}
	if err := s.PutAgentConversation(ctx, c); err != nil {
		t.Fatalf("record a conversation after migration: %v", err)
	}
}

// checkEndpointFixture checks the sessions' endpoints of a fixture written
// at schema version v (none before 5), then that one can be recorded.
func checkEndpointFixture(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := context.Background()
	want := Endpoint{Provider: "openai", Model: "gpt-test"}
	if v >= 5 {
		want.WireAPI, want.BaseURL = fixtureWire, fixtureBaseURL
	}
	for _, id := range []string{"fx-a", "fx-b", "fx-c"} {
		x, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Endpoint{x.Provider, x.WireAPI, x.BaseURL, x.Model}); got != want {
			t.Errorf("%s endpoint = %+v, want %+v", id, got, want)
		}
	}
	moved := Endpoint{Provider: "relay", WireAPI: "responses", BaseURL: "http://127.0.0.1:9/v1", Model: "m2"}
	if err := s.SetEndpoint(ctx, "fx-a", moved); err != nil {
		t.Fatal(err)
	}
	x, err := s.Session(ctx, "fx-a")
	if err != nil {
		t.Fatal(err)
	}
	if got := (Endpoint{x.Provider, x.WireAPI, x.BaseURL, x.Model}); got != moved {
		t.Errorf("fx-a endpoint after SetEndpoint = %+v, want %+v", got, moved)
	}
	f, err := s.Fork(ctx, "fx-a", "a2", "fx-d", OriginTUI)
	if err != nil {
		t.Fatal(err)
	}
	if got := (Endpoint{f.Provider, f.WireAPI, f.BaseURL, f.Model}); got != moved {
		t.Errorf("fork's endpoint = %+v, want the source's %+v", got, moved)
	}
}

// TestFixtureOfThisVersion keeps fillFixture and checkFixture in step.
func TestFixtureOfThisVersion(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "scv.db"), func(o *Options) { o.Alive = fixtureAlive })
	fillFixture(t, s)
	checkFixture(t, s, SchemaVersion())
}
