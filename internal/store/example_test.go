package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scv-agent/scv/internal/store"
)

// The calls a server makes over a session's life.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example-")
	defer os.RemoveAll(dir)
	me := store.Holder{Instance: dir, PID: os.Getpid(), Start: 1, Name: "daemon"}
	st, err := store.Open(ctx, store.Options{
		Path:   filepath.Join(dir, "state", "scv.db"),
		Holder: me,
		Alive:  func(h store.Holder) bool { return h == me }, // a real server checks PID and start time
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	st.Recover(ctx) // at start: turns left running by dead processes become interrupted

	// session.start
	st.CreateSession(ctx, store.NewSession{ID: "s1", Workspace: "/home/u/proj", Model: "gpt-5", Origin: store.OriginTUI})

	// turn.start: record the turn, then every event line as it is sent.
	tl, _ := st.BeginTurn(ctx, "s1", "t1", "Why does the build fail?\nIt says undefined: Foo")
	tl.Append(ctx, store.Event{Seq: 1, Data: json.RawMessage(`{"type":"turn.started","seq":1}`)})
	tl.Append(ctx, store.Event{Seq: 2, Data: json.RawMessage(`{"type":"assistant.completed","seq":2,"content":"Foo was renamed to Bar."}`)})
	// Before turn.completed is sent: one durable transaction.
	err = tl.Complete(ctx, store.Completion{
		Events: []store.Event{{Seq: 3, Data: json.RawMessage(`{"type":"turn.completed","seq":3}`)}},
		History: store.HistoryUpdate{Append: []json.RawMessage{
			json.RawMessage(`{"role":"user","content":"Why does the build fail?\nIt says undefined: Foo"}`),
			json.RawMessage(`{"role":"assistant","content":"Foo was renamed to Bar."}`),
		}},
		Usage:  store.Usage{InputTokens: 900, OutputTokens: 12, TotalTokens: 912},
		Answer: "Foo was renamed to Bar.",
	})
	fmt.Println("completed:", err == nil)

	// session.list and session.resume
	page, _ := st.ListSessions(ctx, store.ListOptions{Workspace: "/home/u/proj"})
	fmt.Printf("%d session: %q, %d turn\n", len(page.Sessions), page.Sessions[0].Title, page.Sessions[0].Turns)
	l, _ := st.Load(ctx, "s1", store.LoadOptions{TailTurns: 50})
	fmt.Printf("resume: %d history messages, %d events, next seq %d\n", len(l.History), len(l.Turns[0].Events), l.Session.LastSeq+1)

	// scv sessions search
	hits, _ := st.Search(ctx, "renamed", store.SearchOptions{})
	fmt.Printf("search: %s turn %d, %s: %q\n", hits[0].SessionID, hits[0].TurnN, hits[0].Field, hits[0].Line)

	// session.fork at t1 (rewind: the fork's history is what it was before t1), then delete.
	f, _ := st.Fork(ctx, "s1", "t1", "s2", store.OriginTUI)
	h, _ := st.History(ctx, "s2")
	fmt.Printf("fork: %s from %s at %s, %d history messages\n", f.ID, f.ForkedFrom, f.ForkedAt, len(h))
	fmt.Println("delete:", st.Delete(ctx, "s1"))

	// Output:
	// completed: true
	// 1 session: "Why does the build fail?", 1 turn
	// resume: 2 history messages, 3 events, next seq 4
	// search: s1 turn 1, answer: "Foo was renamed to Bar."
	// fork: s2 from s1 at t1, 0 history messages
	// delete: <nil>
}
