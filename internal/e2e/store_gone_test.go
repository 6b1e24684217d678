package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestDatabaseRemovedDuringATurn: the database removed while a turn waits
// for an approval (after it began and its events were written): the turn
// still completes, in memory, with the store_error event and not_stored,
// and its answer stays in the session's history for the next turn.
func TestDatabaseRemovedDuringATurn(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI}).SessionID
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo mid-turn"}`))
	fm.Script(modeltest.Text("answered mid-removal"))
	sendTurn(t, c, sid, "run it")
	appr := last[*proto.ApprovalRequested](t, until(t, c, proto.EventApprovalRequested))
	matches, _ := filepath.Glob(filepath.Join(in.home, "state", "scv.db") + "*")
	for _, f := range matches {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, c, sid, appr.ApprovalID)
	evs := until(t, c, proto.EventTurnCompleted)
	if done := last[*proto.TurnCompleted](t, evs); !done.NotStored {
		t.Errorf("the turn whose database went away mid-turn does not say not_stored: %v", eventTypes(evs))
	}
	if len(ofType[*proto.Error](evs)) == 0 {
		t.Errorf("no store_error event before turn.completed: %v", eventTypes(evs))
	}
	fm.Script(modeltest.Text("next"))
	sendTurn(t, c, sid, "next")
	until(t, c, proto.EventTurnCompleted)
	if reqs := fm.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Raw), "answered mid-removal") {
		t.Errorf("the unsaved turn's answer is not in the next request's history")
	}
}

// TestDatabaseRemovedWhileRunning: removing state/scv.db* under a running
// daemon does not lose turns silently. The next turn still answers, but
// an error event store_error comes before its turn.completed, which says
// not_stored; the daemon logs it; and the next daemon starts a new, empty
// database instead of reviving the removed one.
func TestDatabaseRemovedWhileRunning(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.env)
	c := in.connect()
	started := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI})
	fm.Script(modeltest.Text("stored answer"))
	sendTurn(t, c, started.SessionID, "before the removal")
	if done := last[*proto.TurnCompleted](t, until(t, c, proto.EventTurnCompleted)); done.NotStored {
		t.Fatalf("a turn with the database in place says not_stored")
	}

	db := filepath.Join(in.home, "state", "scv.db")
	matches, _ := filepath.Glob(db + "*")
	if len(matches) == 0 {
		t.Fatalf("no %s* files to remove", db)
	}
	for _, f := range matches {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for i, prompt := range []string{"after the removal", "and once more"} {
		fm.Script(modeltest.Text("unsaved answer"))
		sendTurn(t, c, started.SessionID, prompt)
		evs := until(t, c, proto.EventTurnCompleted)
		done := last[*proto.TurnCompleted](t, evs)
		if !done.NotStored {
			t.Errorf("turn %d after the removal: turn.completed does not say not_stored", i+1)
		}
		var notice *proto.Error
		for _, e := range ofType[*proto.Error](evs) {
			if e.Code == proto.ErrStore {
				notice = e
			}
		}
		if notice == nil || notice.Fatal || !strings.Contains(notice.Message, db) || !strings.Contains(notice.Message, "not saved") || !strings.Contains(notice.Message, "scv stop, then scv start") {
			t.Errorf("turn %d after the removal: store_error event %+v, want one naming %s, that nothing is saved and the restart", i+1, notice, db)
		}
	}
	// The session goes on in memory: the model saw the whole conversation.
	if got := userTexts(fm.Requests()[2]); len(got) != 3 {
		t.Errorf("the last request sent the user messages %q, want all three turns", got)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(d.stderr.String(), "store database file removed or replaced") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if log := d.stderr.String(); !strings.Contains(log, "store database file removed or replaced") || !strings.Contains(log, db) {
		t.Errorf("the daemon's log does not say the database is gone:\n%s", log)
	}
	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: exit %d %s", r.code, r.stderr)
	}
	if !d.wait(20 * time.Second) {
		t.Fatal("the daemon did not stop")
	}
	in.startDaemon(in.env)
	if list := in.run(in.env, "", "sessions", "list", "--json"); list.code != 0 || strings.Contains(list.stdout, started.SessionID) {
		t.Errorf("after a restart: exit %d, the removed database's session is listed:\n%s%s", list.code, list.stdout, list.stderr)
	}
}
