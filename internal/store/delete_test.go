package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// fileBytes is the database file and its WAL as they are on disk.
func fileBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{s.Path(), s.Path() + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// secretTurns stores turns whose prompt, answer, tool output and history
// all carry marker, large enough to spill into overflow pages.
func secretTurns(t *testing.T, s *Store, id, marker string) {
	t.Helper()
	ctx := context.Background()
	mustSession(t, s, id)
	var seq uint64
	for i := range 5 {
		prompt := fmt.Sprintf("%s prompt %d: please look at zqx%sword%d", marker, i, strings.ToLower(marker), i)
		answer := marker + " answer " + strings.Repeat("lorem ipsum ", 50)
		tl, err := s.BeginTurn(ctx, id, fmt.Sprint("t", i), prompt)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			seq++
			out := fmt.Sprintf(`,"output":%q`, marker+" tool output "+strings.Repeat("x", 3000))
			if err := tl.Append(ctx, ev(seq, "tool.completed", out)); err != nil {
				t.Fatal(err)
			}
		}
		seq++
		err = tl.Complete(ctx, Completion{
			Events:  []Event{ev(seq, "turn.completed", "")},
			History: HistoryUpdate{Append: []json.RawMessage{msg("user", prompt), msg("tool", marker+strings.Repeat(" out", 2000)), msg("assistant", answer)}},
			Answer:  answer,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeleteLeavesNoText(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	secretTurns(t, s, "keep", "KEEPMARKER")
	secretTurns(t, s, "gone", "GONEMARKER")
	if _, err := s.Fork(ctx, "gone", "t3", "gone-fork", OriginTUI); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, "gone", "GONEMARKER title"); err != nil {
		t.Fatal(err)
	}
	s.Checkpoint(ctx)
	before := fileBytes(t, s)
	for _, m := range []string{"GONEMARKER", "zqxgonemarkerword3", "KEEPMARKER"} {
		if !bytes.Contains(before, []byte(m)) {
			t.Fatalf("%q is not in the file before delete: the check below would prove nothing", m)
		}
	}
	for _, id := range []string{"gone", "gone-fork"} {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	after := fileBytes(t, s)
	for _, m := range []string{"GONEMARKER", "zqxgonemarkerword"} {
		if i := bytes.Index(after, []byte(m)); i >= 0 {
			t.Errorf("%q is still in the file after delete at offset %d: %q", m, i, after[max(0, i-40):min(len(after), i+60)])
		}
	}
	if !bytes.Contains(after, []byte("KEEPMARKER")) {
		t.Error("the kept session's text is gone too")
	}
	if _, err := s.Session(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session still readable: %v", err)
	}
	if err := s.Delete(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	// The file shrank: freed pages went back to the file system.
	if len(after) >= len(before) {
		t.Errorf("file did not shrink: %d bytes before, %d after", len(before), len(after))
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir()+"/scv.db", func(o *Options) {
		o.Now = c.now
		o.Alive = func(Holder) bool { return true }
	})
	for i := range 6 {
		mustSession(t, s, fmt.Sprint("s", i))
		c.t = c.t.Add(24 * time.Hour)
	}
	if err := s.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	// The oldest is live here: never pruned.
	if _, err := s.Acquire(ctx, "s0"); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctx, PruneOptions{MaxSessions: 4})
	if err != nil {
		t.Fatal(err)
	}
	// s1 goes (s0 is held); s2..s5 stay.
	if n != 1 {
		t.Errorf("pruned %d, want 1", n)
	}
	// Sessions not updated for 2.5 days: s2 and s3 (s0 held, s4, s5 recent).
	n, err = s.Prune(ctx, PruneOptions{MaxAge: 60 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("pruned by age %d, want 2", n)
	}
	ids := listedIDs(t, s, ListOptions{})
	if strings.Join(ids, ",") != "s5,s4,s0" {
		t.Errorf("left %v, want s5, s4 and the live s0", ids)
	}
}

// TestPruneWorkspace: a workspace's limits count and remove that
// workspace's sessions only.
func TestPruneWorkspace(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir()+"/scv.db", func(o *Options) { o.Now = c.now })
	for i := range 6 {
		ws := "/a"
		if i%2 == 1 {
			ws = "/b"
		}
		if _, err := s.CreateSession(ctx, NewSession{ID: fmt.Sprint("s", i), Workspace: ws, Origin: OriginExec}); err != nil {
			t.Fatal(err)
		}
		c.t = c.t.Add(time.Hour)
	}
	if err := s.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctx, PruneOptions{MaxSessions: 1, Workspace: "/a"})
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want the two older sessions of /a", n, err)
	}
	ids := listedIDs(t, s, ListOptions{})
	if strings.Join(ids, ",") != "s5,s4,s3,s1" {
		t.Errorf("left %v, want every session of /b and the newest of /a", ids)
	}
}
