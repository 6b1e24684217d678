package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestUndoEndToEnd drives `scv undo` through the real binary with no
// daemon: scv exec --yes replaces a.txt and creates b.txt; scv undo
// without --yes on a non-terminal stdin is refused; --yes shows the diff,
// restores a.txt and removes b.txt (with no API key set: undo runs no
// turn); a second undo finds nothing.
func TestUndoEndToEnd(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"changed\n","mode":"replace"}`))
	fm.Script(modeltest.ToolCall("c2", "write", `{"path":"b.txt","content":"new file\n","mode":"create"}`))
	fm.Script(modeltest.Text("done"))
	if r := in.run(in.env, "", "exec", "--yes", "edit the files"); r.code != 0 {
		t.Fatalf("exec: exit %d: %s", r.code, r.stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(in.ws, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	if got := read("a.txt"); got != "changed\n" {
		t.Fatalf("a.txt after exec = %q", got)
	}

	r := in.run(in.env, "", "undo")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") || read("a.txt") != "changed\n" {
		t.Fatalf("undo without --yes on a pipe: exit %d, stderr %s, a.txt %q", r.code, r.stderr, read("a.txt"))
	}

	// Undo runs no turn: it needs no API key.
	r = in.run(in.withEnv("OPENAI_API_KEY"), "", "undo", "--yes")
	if r.code != 0 {
		t.Fatalf("undo --yes without a key: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"restore a.txt", "-changed", "+hello from a.txt", "remove b.txt", "not tracked"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("undo --yes stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "restored a.txt\nremoved b.txt\n" {
		t.Errorf("undo --yes stdout = %q", r.stdout)
	}
	if got := read("a.txt"); got != "hello from a.txt\n" {
		t.Errorf("a.txt after undo = %q", got)
	}
	if _, err := os.Stat(filepath.Join(in.ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after undo: %v, want it removed", err)
	}

	r = in.run(in.env, "", "undo", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to undo") {
		t.Errorf("second undo: exit %d, stderr %s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 3 {
		t.Errorf("the model got %d requests; undo must send none", n)
	}
}

// TestUndoOfASessionLiveInTheDaemon: a session a client has open in the
// daemon is not taken over by `scv undo` (it names where the session is
// open and changes nothing); the client undoes it itself with
// session.undo over the socket; once the client is gone, `scv undo` finds
// the daemon's undo recorded (nothing left to undo).
func TestUndoOfASessionLiveInTheDaemon(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"changed\n","mode":"replace"}`))
	fm.Script(modeltest.Text("done"))
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	started := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI})
	sendTurn(t, c, started.SessionID, "edit a.txt")
	approveNext(t, c, started.SessionID)
	until(t, c, proto.EventTurnCompleted)
	a := filepath.Join(in.ws, "a.txt")

	r := in.run(in.env, "", "undo", "--yes")
	if b, _ := os.ReadFile(a); r.code != 1 || !strings.Contains(r.stderr, "/undo") || string(b) != "changed\n" {
		t.Fatalf("scv undo of a live session: exit %d, stderr %s, a.txt %q", r.code, r.stderr, b)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done, err := client.CallFor[*proto.SessionUndone](ctx, c, &proto.SessionUndo{SessionID: started.SessionID})
	if err != nil || len(done.Files) != 1 || done.Files[0].Action != proto.UndoRestore {
		t.Fatalf("session.undo over the socket: %+v, %v", done, err)
	}
	if b, _ := os.ReadFile(a); string(b) != "hello from a.txt\n" {
		t.Fatalf("a.txt after the daemon's undo = %q", b)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = in.run(in.env, "", "undo", "--yes")
		if strings.Contains(r.stderr, "nothing to undo") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to undo") {
		t.Errorf("scv undo after the daemon's undo: exit %d, stderr %s", r.code, r.stderr)
	}
}
