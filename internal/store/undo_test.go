package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/filechange"
)

// TestUndoRecordsAfterMigration migrates the last released fixture (schema
// 3, before undo existed) and keeps, finds and marks undone a turn's
// written files in it; the session's model can be changed.
func TestUndoRecordsAfterMigration(t *testing.T) {
	s := openAt(t, copyFixture(t, "v3.db"), func(o *Options) { o.Alive = fixtureAlive })
	ctx := context.Background()
	if _, err := s.LastUndoable(ctx, "fx-a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("undo in a migrated session without files: %v, want ErrNotFound", err)
	}
	mustSession(t, s, "u")
	write := func(tid string, files []filechange.Change, state TurnState) {
		t.Helper()
		tl, err := s.BeginTurn(ctx, "u", tid, "prompt "+tid)
		if err != nil {
			t.Fatal(err)
		}
		if state == TurnCompleted {
			err = tl.Complete(ctx, Completion{Files: files})
		} else {
			err = tl.End(ctx, TurnEnd{State: state, Files: files})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, MaxTurnFileBytes+1)
	first := []filechange.Change{{Path: "a.txt", Existed: true, Before: []byte("old a\n"), After: "h1"}, {Path: "new.txt", After: "h2"}}
	write("t1", first, TurnCompleted)
	write("t2", []filechange.Change{{Path: "empty.txt", Existed: true, Before: []byte{}, After: "h3"}, {Path: "big.bin", Existed: true, Before: big, After: "h4"}}, TurnCancelled)
	write("t3", nil, TurnCompleted)

	u, err := s.LastUndoable(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	want := Undoable{TurnID: "t2", Files: []filechange.Change{{Path: "empty.txt", Existed: true, Before: []byte{}, After: "h3"},
		{Path: "big.bin", Existed: true, Unkept: "it had 1048577 bytes before the turn, more than the 1048576 undo keeps", After: "h4"}}}
	if d := cmp.Diff(want, u); d != "" {
		t.Fatalf("last undoable (-want +got):\n%s", d)
	}
	// A fresh store, as a new process (scv undo) opens it: nothing
	// prepared yet.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, s.Path(), nil)
	note := msg("user", "[scv] undone")
	if err := s.MarkUndone(ctx, "u", "t2", note); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUndone(ctx, "u", "t2", note); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second mark: %v, want ErrNotFound", err)
	}
	u, err = s.LastUndoable(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Undoable{TurnID: "t1", Files: first}, u); d != "" {
		t.Fatalf("after undoing t2 (-want +got):\n%s", d)
	}
	h, err := s.History(ctx, "u")
	if err != nil || len(h) != 1 || string(h[0]) != string(note) {
		t.Fatalf("history after undo: %s, %v", h, err)
	}
	if err := s.MarkUndone(ctx, "u", "t1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LastUndoable(ctx, "u"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after undoing everything: %v, want ErrNotFound", err)
	}
	// A loaded turn says when it was undone and which files that put back,
	// so a resumed transcript can show the undo.
	turns, _, err := s.Turns(ctx, "u", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range turns {
		switch tt.ID {
		case "t1":
			if tt.Undone.IsZero() || !cmp.Equal(tt.Undid, []UndoneFile{{Path: "a.txt"}, {Path: "new.txt", Removed: true}}) {
				t.Errorf("loaded t1: undone %v, files %+v", tt.Undone, tt.Undid)
			}
		case "t3":
			if !tt.Undone.IsZero() || tt.Undid != nil {
				t.Errorf("t3 was never undone, loaded as undone %v with %+v", tt.Undone, tt.Undid)
			}
		}
	}
	one, err := s.Turn(ctx, "u", "t2")
	if err != nil || one.Undone.IsZero() || len(one.Undid) != 2 {
		t.Errorf("Turn(t2): undone %v, files %+v, %v", one.Undone, one.Undid, err)
	}
	if err := s.SetModel(ctx, "u", "other-model"); err != nil {
		t.Fatal(err)
	}
	if x, err := s.Session(ctx, "u"); err != nil || x.Model != "other-model" {
		t.Fatalf("model after SetModel: %q, %v", x.Model, err)
	}
	if err := s.SetModel(ctx, "nope", "m"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetModel of an unknown session: %v", err)
	}
}
