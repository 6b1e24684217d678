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
)

var self = Holder{Instance: "/home/u/.scv", PID: 100, Start: 7, Name: "daemon"}

// clock is a fake clock advancing one second per reading.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func openAt(t testing.TB, path string, mod func(*Options)) *Store {
	t.Helper()
	c := newClock()
	o := Options{Path: path, Holder: self, Now: c.now}
	if mod != nil {
		mod(&o)
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openTemp(t testing.TB) *Store {
	return openAt(t, filepath.Join(t.TempDir(), "state", "scv.db"), nil)
}

// listedIDs lists the sessions of one page of ListSessions(o).
func listedIDs(t testing.TB, s *Store, o ListOptions) []string {
	t.Helper()
	p, err := s.ListSessions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range p.Sessions {
		ids = append(ids, x.ID)
	}
	return ids
}

func ev(seq uint64, typ string, extra string) Event {
	return Event{Seq: seq, Data: json.RawMessage(fmt.Sprintf(`{"type":%q,"seq":%d%s}`, typ, seq, extra))}
}

func msg(role, content string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"role": role, "content": content})
	return b
}

func mustSession(t testing.TB, s *Store, id string) {
	t.Helper()
	if _, err := s.CreateSession(context.Background(), NewSession{ID: id, Workspace: "/ws", Provider: "openai", Model: "m", Origin: OriginTUI}); err != nil {
		t.Fatal(err)
	}
}

// runTurn stores one completed turn with a user and an assistant message
// and returns the next seq.
// startTurn begins a turn and records its turn.started event, flushed,
// leaving the turn running (what a process that dies mid-turn leaves).
func startTurn(t testing.TB, s *Store, sid, tid, prompt string, seq uint64) *TurnLog {
	t.Helper()
	ctx := context.Background()
	tl, err := s.BeginTurn(ctx, sid, tid, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Append(ctx, ev(seq+1, "turn.started", "")); err != nil {
		t.Fatal(err)
	}
	if err := tl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return tl
}

func runTurn(t testing.TB, s *Store, sid, tid, prompt, answer string, seq uint64) uint64 {
	t.Helper()
	ctx := context.Background()
	tl, err := s.BeginTurn(ctx, sid, tid, prompt)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"turn.started", "assistant.completed"} {
		seq++
		if err := tl.Append(ctx, ev(seq, typ, "")); err != nil {
			t.Fatal(err)
		}
	}
	seq++
	err = tl.Complete(ctx, Completion{
		Events:  []Event{ev(seq, "turn.completed", "")},
		History: HistoryUpdate{Append: []json.RawMessage{msg("user", prompt), msg("assistant", answer)}},
		Usage:   Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
		Answer:  answer,
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func TestTurnRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	seq := runTurn(t, s, "s1", "t1", "\n  fix the build\nplease", "done", 0)
	runTurn(t, s, "s1", "t2", "second", "ok", seq)

	l, err := s.Load(ctx, "s1", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Session.Title != "fix the build" {
		t.Errorf("title = %q, want the first non-blank line of the first prompt", l.Session.Title)
	}
	if l.Session.Turns != 2 || l.Session.LastSeq != 6 || l.Before != 0 {
		t.Errorf("turns %d, last seq %d, before %d; want 2, 6, 0", l.Session.Turns, l.Session.LastSeq, l.Before)
	}
	wantHist := []json.RawMessage{msg("user", "\n  fix the build\nplease"), msg("assistant", "done"), msg("user", "second"), msg("assistant", "ok")}
	if d := cmp.Diff(wantHist, l.History); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
	want := []Turn{
		{ID: "t1", N: 1, Prompt: "\n  fix the build\nplease", Answer: "done", State: TurnCompleted, Usage: Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
			Events: []Event{ev(1, "turn.started", ""), ev(2, "assistant.completed", ""), ev(3, "turn.completed", "")}},
		{ID: "t2", N: 2, Prompt: "second", Answer: "ok", State: TurnCompleted, Usage: Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
			Events: []Event{ev(4, "turn.started", ""), ev(5, "assistant.completed", ""), ev(6, "turn.completed", "")}},
	}
	if d := cmp.Diff(want, l.Turns, cmpopts.IgnoreFields(Turn{}, "Started", "Ended")); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	for _, tr := range l.Turns {
		if tr.Started.IsZero() || !tr.Ended.After(tr.Started) {
			t.Errorf("turn %s: started %v, ended %v", tr.ID, tr.Started, tr.Ended)
		}
	}
}

func TestFailedTurnKeepsEventsNotHistory(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	seq := runTurn(t, s, "s1", "t1", "one", "a1", 0)
	for _, st := range []TurnState{TurnFailed, TurnCancelled} {
		tid := "t-" + string(st)
		tl, err := s.BeginTurn(ctx, "s1", tid, "doomed")
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if err := tl.Append(ctx, ev(seq, "turn.started", "")); err != nil {
			t.Fatal(err)
		}
		if err := tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		seq++
		if err := tl.End(ctx, TurnEnd{State: st, Code: "provider_error", Message: "boom", Events: []Event{ev(seq, "turn.failed", "")}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Turn(ctx, "s1", tid)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != st || got.ErrorCode != "provider_error" || got.ErrorMessage != "boom" || len(got.Events) != 2 {
			t.Errorf("%s turn = %+v", st, got)
		}
	}
	h, err := s.History(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]json.RawMessage{msg("user", "one"), msg("assistant", "a1")}, h); d != "" {
		t.Errorf("history after failed turns (-want +got):\n%s", d)
	}
}

func TestHistoryUpdates(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	m := func(i int) json.RawMessage { return msg("user", fmt.Sprint(i)) }
	step := func(tid string, u HistoryUpdate) error {
		tl, err := s.BeginTurn(ctx, "s1", tid, "p")
		if err != nil {
			return err
		}
		err = tl.Complete(ctx, Completion{History: u})
		if err != nil {
			tl.End(ctx, TurnEnd{State: TurnFailed})
		}
		return err
	}
	cases := []struct {
		name string
		u    HistoryUpdate
		want []json.RawMessage
		err  string
	}{
		{"append", HistoryUpdate{Append: []json.RawMessage{m(1), m(2), m(3)}}, []json.RawMessage{m(1), m(2), m(3)}, ""},
		{"trim the front", HistoryUpdate{Append: []json.RawMessage{m(4)}, Drop: 2}, []json.RawMessage{m(3), m(4)}, ""},
		{"drop into the appended ones", HistoryUpdate{Append: []json.RawMessage{m(5), m(6)}, Drop: 3}, []json.RawMessage{m(6)}, ""},
		{"replace", HistoryUpdate{Append: []json.RawMessage{m(7)}, Replace: true}, []json.RawMessage{m(7)}, ""},
		{"drop too many", HistoryUpdate{Append: []json.RawMessage{m(8)}, Drop: 3}, []json.RawMessage{m(7)}, "drops 3 of 2"},
		{"invalid JSON", HistoryUpdate{Append: []json.RawMessage{json.RawMessage(`{"a":`)}}, []json.RawMessage{m(7)}, "not valid JSON"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := step(fmt.Sprint("t", i), c.u)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error = %v, want %q", err, c.err)
			}
			h, err := s.History(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, h); d != "" {
				t.Errorf("history (-want +got):\n%s", d)
			}
		})
	}
	if err := s.UpdateHistory(ctx, "s1", HistoryUpdate{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.History(ctx, "s1"); len(h) != 0 {
		t.Errorf("history after clear = %s", h)
	}
}

func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	tl, err := s.BeginTurn(ctx, "s1", "t1", "p")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want one containing %q", name, err, want)
		}
	}
	_, err = s.CreateSession(ctx, NewSession{ID: "s1", Workspace: "/ws", Origin: OriginExec})
	check("duplicate session", err, "already exists")
	_, err = s.CreateSession(ctx, NewSession{ID: "s2", Workspace: "/ws", Origin: "web"})
	check("bad origin", err, `unknown origin "web"`)
	_, err = s.CreateSession(ctx, NewSession{ID: "", Workspace: "/ws", Origin: OriginExec})
	check("empty id", err, "empty session id")
	_, err = s.BeginTurn(ctx, "s1", "t2", "p")
	check("second running turn", err, "still has turn t1 running")
	_, err = s.BeginTurn(ctx, "nope", "t2", "p")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("begin turn of unknown session: %v", err)
	}
	mustSession(t, s, "unheld")
	if err := s.Release(ctx, "unheld"); err != nil {
		t.Fatal(err)
	}
	_, err = s.BeginTurn(ctx, "unheld", "t1", "p")
	check("turn without the lease", err, "acquire it before running a turn")
	check("seq zero", tl.Append(ctx, Event{Data: json.RawMessage(`{}`)}), "without seq")
	check("not an object", tl.Append(ctx, Event{Seq: 1, Data: json.RawMessage(`[1]`)}), "not a JSON object")
	if err := tl.Append(ctx, ev(5, "x", "")); err != nil {
		t.Fatal(err)
	}
	check("seq going back", tl.Append(ctx, ev(5, "x", "")), "seq 5 does not follow 5")
	check("end state", tl.End(ctx, TurnEnd{State: TurnCompleted}), "not failed or cancelled")
	check("rename empty", s.Rename(ctx, "s1", " \n "), "empty title")
	if err := s.Rename(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename unknown: %v", err)
	}
	_, err = s.ListSessions(ctx, ListOptions{Before: "garbage"})
	check("bad cursor", err, `invalid cursor "garbage"`)
	_, err = s.Fork(ctx, "s1", "nope", "s3", OriginTUI)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("fork at unknown turn: %v", err)
	}
	_, err = s.Prune(ctx, PruneOptions{MaxSessions: -1})
	check("negative prune", err, "negative limit")
	if _, err := Open(ctx, Options{}); err == nil {
		t.Error("open without a path succeeded")
	}
}

func TestListPagesAndRename(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for i := range 7 {
		ws := "/a"
		if i%2 == 1 {
			ws = "/b"
		}
		if _, err := s.CreateSession(ctx, NewSession{ID: fmt.Sprint("s", i), Workspace: ws, Origin: OriginExec}); err != nil {
			t.Fatal(err)
		}
	}
	// s2 becomes the most recently updated.
	if err := s.Rename(ctx, "s2", "  renamed\nsecond line"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var o ListOptions
	o.Limit = 3
	for pages := 0; ; pages++ {
		p, err := s.ListSessions(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) > 3 || pages > 3 {
			t.Fatalf("page of %d sessions, page %d", len(p.Sessions), pages)
		}
		for _, x := range p.Sessions {
			ids = append(ids, x.ID)
			if x.ID == "s2" && x.Title != "renamed" {
				t.Errorf("renamed title = %q", x.Title)
			}
		}
		if p.Next == "" {
			break
		}
		o.Before = p.Next
	}
	if d := cmp.Diff([]string{"s2", "s6", "s5", "s4", "s3", "s1", "s0"}, ids); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"s5", "s3", "s1"}, listedIDs(t, s, ListOptions{Workspace: "/b"})); d != "" {
		t.Errorf("workspace /b (-want +got):\n%s", d)
	}
	// A renamed session keeps its title when its first prompt arrives.
	runTurn(t, s, "s2", "t1", "first prompt", "a", 0)
	if x, _ := s.Session(ctx, "s2"); x.Title != "renamed" {
		t.Errorf("title after first prompt = %q, want the renamed one", x.Title)
	}
}

func TestTailLoading(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	var seq uint64
	for i := 1; i <= 10; i++ {
		seq = runTurn(t, s, "s1", fmt.Sprint("t", i), fmt.Sprint("p", i), "a", seq)
	}
	l, err := s.Load(ctx, "s1", LoadOptions{TailTurns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Turns) != 4 || l.Turns[0].N != 7 || l.Turns[3].N != 10 || l.Before != 7 {
		t.Fatalf("tail: %d turns from %d, before %d", len(l.Turns), l.Turns[0].N, l.Before)
	}
	if len(l.History) != 20 {
		t.Errorf("history of a tail load has %d messages, want all 20", len(l.History))
	}
	var all []int
	before := l.Before
	for before > 0 {
		ts, next, err := s.Turns(ctx, "s1", before, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			all = append(all, tr.N)
			if len(tr.Events) != 3 {
				t.Errorf("turn %d has %d events", tr.N, len(tr.Events))
			}
		}
		before = next
	}
	if d := cmp.Diff([]int{3, 4, 5, 6, 1, 2}, all); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}
	o, err := s.Outline(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(o) != 10 || o[0].Prompt != "p1" || o[9].ID != "t10" || o[3].Events != nil {
		t.Errorf("outline: %d turns, first %q, last %s", len(o), o[0].Prompt, o[9].ID)
	}
	// A byte bound keeps at least the newest turn.
	l, err = s.Load(ctx, "s1", LoadOptions{MaxEventBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Turns) != 1 || l.Turns[0].N != 10 || l.Before != 10 {
		t.Errorf("byte-bounded load: %d turns, before %d", len(l.Turns), l.Before)
	}
}

func TestFork(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	var seq uint64
	for i := 1; i <= 3; i++ {
		seq = runTurn(t, s, "s1", fmt.Sprint("t", i), fmt.Sprint("p", i), fmt.Sprint("a", i), seq)
	}
	// The third turn trimmed the first turn's messages; forking before it
	// must still give the history as it was then.
	tl, err := s.BeginTurn(ctx, "s1", "t4", "p4")
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Complete(ctx, Completion{History: HistoryUpdate{Append: []json.RawMessage{msg("user", "p4")}, Drop: 4}}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fork(ctx, "s1", "t3", "f1", OriginTUI)
	if err != nil {
		t.Fatal(err)
	}
	if f.ForkedFrom != "s1" || f.ForkedAt != "t3" || f.Turns != 2 || f.LastSeq != 6 || f.Title != "p1" || f.Lease != nil {
		t.Errorf("fork summary = %+v", f)
	}
	l, err := s.Load(ctx, "f1", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []json.RawMessage{msg("user", "p1"), msg("assistant", "a1"), msg("user", "p2"), msg("assistant", "a2")}
	if d := cmp.Diff(want, l.History); d != "" {
		t.Errorf("fork history (-want +got):\n%s", d)
	}
	if len(l.Turns) != 2 || l.Turns[1].ID != "t2" || len(l.Turns[1].Events) != 3 {
		t.Errorf("fork turns = %+v", l.Turns)
	}
	// The fork goes on independently and can itself be forked at its first turn.
	if _, err := s.Acquire(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, "f1", "t3b", "p3 edited", "a3b", f.LastSeq)
	f2, err := s.Fork(ctx, "f1", "t1", "f2", OriginExec)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := s.History(ctx, "f2"); len(h) != 0 || f2.Turns != 0 {
		t.Errorf("fork at the first turn: history %s, %d turns", h, f2.Turns)
	}
	if h, _ := s.History(ctx, "s1"); len(h) != 3 {
		t.Errorf("original history changed: %s", h)
	}
}

func TestFilePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := openAt(t, filepath.Join(dir, "scv.db"), nil)
	mustSession(t, s, "s1")
	for _, p := range []string{dir, s.Path(), s.Path() + "-wal", s.Path() + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	// Wider modes left by someone else are tightened.
	s.Close()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "scv.db"), 0o644); err != nil {
		t.Fatal(err)
	}
	openAt(t, filepath.Join(dir, "scv.db"), nil)
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "scv.db"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s after reopen: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	mustSession(t, s, "s2")
	runTurn(t, s, "s1", "t1", "p", "a", 0)
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 2 || st.Turns != 1 || st.Schema != SchemaVersion() || st.FileBytes < 4096 || st.Path != s.Path() {
		t.Errorf("stats = %+v", st)
	}
}

// TestForkTitle: a fork keeps the original's title when it copies turns
// or the title was given by rename; forked at the first turn, its own
// first prompt names it.
func TestForkTitle(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustSession(t, s, "s1")
	seq := runTurn(t, s, "s1", "t1", "first prompt", "a", 0)
	runTurn(t, s, "s1", "t2", "second prompt", "b", seq)
	title := func(id string) string {
		x, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return x.Title
	}
	if _, err := s.Fork(ctx, "s1", "t2", "f2", OriginTUI); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, "s1", "t1", "f1", OriginTUI); err != nil {
		t.Fatal(err)
	}
	if got := title("f2"); got != "first prompt" {
		t.Errorf("fork at turn 2: title %q, want the original's", got)
	}
	if got := title("f1"); got != "" {
		t.Errorf("fork at turn 1: title %q, want none until its first prompt", got)
	}
	if _, err := s.Acquire(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, "f1", "t3", "edited prompt", "c", 100)
	if got := title("f1"); got != "edited prompt" {
		t.Errorf("fork at turn 1 after its first prompt: title %q", got)
	}
	if err := s.Rename(ctx, "s1", "Named"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, "s1", "t1", "f3", OriginTUI); err != nil {
		t.Fatal(err)
	}
	if got := title("f3"); got != "Named" {
		t.Errorf("fork of a renamed session at turn 1: title %q, want the given name", got)
	}
}

// TestCloseCheckpointsWhatItWrote: a Store that wrote checkpoints its
// frames when it closes, even while another process's connection keeps
// the database open (SQLite then does not): the WAL's frames reach the
// main file, so short-lived writers beside a daemon do not grow the WAL.
func TestCloseCheckpointsWhatItWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "scv.db")
	keeper := openAt(t, path, nil) // the long-lived process
	mustSession(t, keeper, "s0")
	if _, err := keeper.c.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	w, err := Open(context.Background(), Options{Path: path, Holder: self, Now: newClock().now})
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, w, "s1")
	for i := range 20 {
		runTurn(t, w, "s1", fmt.Sprintf("t%d", i), strings.Repeat("p", 4000), "a", uint64(i*10))
	}
	if got := fileSize(t, path); got != before {
		t.Fatalf("the main file changed before the close (%d → %d bytes): the test would prove nothing", before, got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, path); got <= before {
		t.Errorf("main file %d bytes after the writer closed, %d before: its frames were not checkpointed", got, before)
	}
	// A Store that only read checkpoints nothing.
	r, err := Open(context.Background(), Options{Path: path, Holder: self, Now: newClock().now})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r.ck.wrote.Load() {
		t.Error("a Store that wrote nothing counts as a writer")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestWarmUp: WarmUp opens the read pool's connection and prepares the
// statements of a turn in the background; a turn after it runs on them, and
// Close right after WarmUp waits for it rather than racing it (-race).
func TestWarmUp(t *testing.T) {
	s := openTemp(t)
	s.WarmUp()
	s.warming.Wait()
	if n := s.r.Stats().OpenConnections; n != 1 {
		t.Errorf("read pool after WarmUp: %d open connections, want 1", n)
	}
	s.hotMu.Lock()
	hot := len(s.hot)
	s.hotMu.Unlock()
	if want := len(builtQueries().hot); hot != want {
		t.Errorf("WarmUp prepared %d statements, want %d", hot, want)
	}
	mustSession(t, s, "s_warm")
	runTurn(t, s, "s_warm", "t_1", "hello", "hi", 1)

	// Closed at once: Close stops and waits for the warm-up.
	s2, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "scv.db"), Holder: self})
	if err != nil {
		t.Fatal(err)
	}
	s2.WarmUp()
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCreateSessionReturnsStored: what CreateSession returns (read back in
// its own transaction) is what Session reads afterwards.
func TestCreateSessionReturnsStored(t *testing.T) {
	s := openTemp(t)
	got, err := s.CreateSession(context.Background(), NewSession{ID: "s_same", Workspace: "/w", Provider: "p", Model: "m",
		WireAPI: "chat", BaseURL: "https://x", Origin: OriginExec, DelegationDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Session(context.Background(), "s_same")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateSession's session differs from Session's (-Session +CreateSession):\n%s", diff)
	}
	if got.ID != "s_same" || got.Workspace != "/w" || got.State != SessionOpen || got.Mode == "" {
		t.Errorf("CreateSession returned %+v", got)
	}
}

// TestBeginFirstTurn: a session and its first turn stored in one
// transaction hold what CreateSession then BeginTurn would (the title from
// the prompt, the mode it starts in, a running turn that completes); a
// failure anywhere in it stores neither, and a bad session is refused
// naming what is wrong.
func TestBeginFirstTurn(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	n := NewSession{ID: "s_first", Workspace: "/w", Origin: OriginExec, Mode: ModePlan}
	tl, err := s.BeginFirstTurn(ctx, n, "t_1", "plan the refactor\nin detail", nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Session(ctx, "s_first")
	if err != nil {
		t.Fatal(err)
	}
	if x.Title != "plan the refactor" || x.Turns != 1 || x.Mode != ModePlan || x.Lease == nil || !x.Lease.same(self) {
		t.Errorf("stored session %+v", x)
	}
	seq := uint64(1)
	if err := tl.Append(ctx, ev(seq, "turn.started", "")); err != nil {
		t.Fatal(err)
	}
	if err := tl.Complete(ctx, Completion{Events: []Event{ev(seq+1, "turn.completed", "")},
		History: HistoryUpdate{Append: []json.RawMessage{msg("user", "plan"), msg("assistant", "ok")}}, Answer: "ok"}); err != nil {
		t.Fatal(err)
	}
	if turn, err := s.Turn(ctx, "s_first", "t_1"); err != nil || turn.State != TurnCompleted {
		t.Errorf("the first turn: %+v, %v", turn, err)
	}

	// A failure in the transaction leaves nothing of it.
	failing := openAt(t, filepath.Join(t.TempDir(), "scv.db"), func(o *Options) {
		o.Fault = func(op string) error {
			if op == "create session" {
				return errors.New("injected")
			}
			return nil
		}
	})
	if _, err := failing.BeginFirstTurn(ctx, NewSession{ID: "s_lost", Workspace: "/w", Origin: OriginExec}, "t_1", "hi", nil); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("BeginFirstTurn with a failing commit: %v", err)
	}
	if _, err := failing.Session(ctx, "s_lost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the session of a failed first turn: %v, want ErrNotFound", err)
	}

	for _, bad := range []struct {
		n    NewSession
		want string
	}{
		{NewSession{ID: "s_x", Workspace: "/w", Origin: OriginExec, Mode: "yolo"}, `mode "yolo"`},
		{NewSession{ID: "s_y", Origin: OriginExec}, "empty workspace"},
		{NewSession{ID: "s_z", Workspace: "/w", Origin: "nowhere"}, `unknown origin "nowhere"`},
	} {
		if _, err := s.BeginFirstTurn(ctx, bad.n, "t_1", "hi", nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("BeginFirstTurn(%+v): %v, want an error naming %s", bad.n, err, bad.want)
		}
	}
	// The same session twice is refused, the first one untouched.
	if _, err := s.BeginFirstTurn(ctx, n, "t_2", "again", nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("BeginFirstTurn of an existing session: %v", err)
	}
	if after, err := s.Session(ctx, "s_first"); err != nil || after.Turns != 1 || after.Title != x.Title {
		t.Errorf("the session after a refused second BeginFirstTurn: %+v, %v", after, err)
	}
	if _, err := s.Turn(ctx, "s_first", "t_2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused turn was stored: %v", err)
	}
}

// TestRecoverTakesNoWriteLock: Recover, which every server runs at start,
// reads on the write connection in a read-only transaction: another
// process's write transaction held meanwhile neither blocks it nor is
// blocked by it (the write pool's BEGIN IMMEDIATE would wait out the whole
// busy timeout and fail with ErrLocked).
func TestRecoverTakesNoWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, path, func(o *Options) { o.BusyTimeout = 300 * time.Millisecond })
	other, err := openPool(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	if _, err := s.Recover(ctx); err != nil {
		t.Fatalf("Recover while another connection holds the write lock: %v", err)
	}
}

// TestOpenAsync: a Store from OpenAsync is usable at once: a write made
// while it opens waits for the opening and for then, which runs first
// (then sees no session of the caller's); Close waits for the opening. An
// opening that fails, or a then that fails, fails every method naming why.
func TestOpenAsync(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "scv.db")
	release := make(chan struct{})
	var sawBefore int
	s, err := OpenAsync(ctx, Options{Path: path, Holder: self}, func(ctx context.Context, s *Store) error {
		<-release // hold the opening until the caller's write waits on it
		page, err := s.ListSessions(ctx, ListOptions{})
		sawBefore = len(page.Sessions)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateSession(ctx, NewSession{ID: "s_async", Workspace: "/w", Origin: OriginExec})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("CreateSession returned before the opening ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sawBefore != 0 {
		t.Errorf("then saw %d sessions: it did not run before the caller's write", sawBefore)
	}
	if err := s.Err(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The opening fails: the database path is a directory.
	dir := filepath.Join(t.TempDir(), "scv.db")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err = OpenAsync(ctx, Options{Path: dir, Holder: self}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(ctx); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Err of a failed opening: %v, want one naming %s", err, dir)
	}
	if _, err := s.CreateSession(ctx, NewSession{ID: "s_x", Workspace: "/w", Origin: OriginExec}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("CreateSession on a failed opening: %v, want the opening's error", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close of a store never opened: %v", err)
	}

	// then fails: the store is closed and fails like a failed opening.
	s, err = OpenAsync(ctx, Options{Path: filepath.Join(t.TempDir(), "scv.db"), Holder: self}, func(context.Context, *Store) error {
		return errors.New("recovery refused")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, "s"); err == nil || !strings.Contains(err.Error(), "recovery refused") {
		t.Errorf("a method after a failing then: %v", err)
	}
	if err := s.w.PingContext(ctx); err == nil {
		t.Error("the write pool is still open after a failing then")
	}
	s.Close()

	// Closed while still opening: Close waits for it, then closes (what
	// this checks is under -race: no pool used before it is set).
	s, err = OpenAsync(ctx, Options{Path: filepath.Join(t.TempDir(), "scv.db"), Holder: self}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.WarmUp()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
