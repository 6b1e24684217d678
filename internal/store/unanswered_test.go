package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestListHidesUnanswered: a session whose turns all ended without an
// answer, the latest failed, is left out when asked (the picker, `scv
// sessions list` without --all) and listed otherwise; every listed
// session carries the state of its latest turn.
func TestListHidesUnanswered(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "scv.db"), nil)
	ctx := context.Background()
	turn := func(sid, tid string, state TurnState, answer string) {
		t.Helper()
		tl, err := s.BeginTurn(ctx, sid, tid, "prompt "+tid)
		if err != nil {
			t.Fatal(err)
		}
		if state == TurnCompleted {
			err = tl.Complete(ctx, Completion{Answer: answer})
		} else {
			err = tl.End(ctx, TurnEnd{State: state, Code: "provider_error", Message: "401", Answer: answer})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"ok", "bad", "answered-then-failed", "cancelled", "empty"} {
		mustSession(t, s, id)
	}
	turn("ok", "t1", TurnCompleted, "fine")
	turn("bad", "t2", TurnFailed, "")
	turn("bad", "t3", TurnFailed, "")
	turn("answered-then-failed", "t4", TurnCompleted, "an answer")
	turn("answered-then-failed", "t5", TurnFailed, "")
	turn("cancelled", "t6", TurnCancelled, "")
	list := func(hide bool) map[string]TurnState {
		t.Helper()
		p, err := s.ListSessions(ctx, ListOptions{HideUnanswered: hide})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]TurnState{}
		for _, x := range p.Sessions {
			out[x.ID] = x.LastTurn
		}
		return out
	}
	all := list(false)
	want := map[string]TurnState{"ok": TurnCompleted, "bad": TurnFailed, "answered-then-failed": TurnFailed, "cancelled": TurnCancelled, "empty": ""}
	for id, st := range want {
		if got, ok := all[id]; !ok || got != st {
			t.Errorf("all sessions: %s last turn %q (listed %v), want %q", id, got, ok, st)
		}
	}
	hidden := list(true)
	if _, ok := hidden["bad"]; ok {
		t.Error("the session that failed before any answer is listed with HideUnanswered")
	}
	var kept []string
	for id := range hidden {
		kept = append(kept, id)
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{"answered-then-failed", "cancelled", "empty", "ok"}) {
		t.Errorf("HideUnanswered kept %v", kept)
	}
}
