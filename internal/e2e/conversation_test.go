package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// fakeCodexConv is a fake Codex that keeps threads as codex exec does: a
// new run prints thread.started with a new id, `resume <id>` prints the
// same id; each run records its argv and prints one command (progress)
// and a reply naming its turn of the thread. It waits 1.5 s after the
// command, three times the progress interval, so that the command's line
// (which came within 500 ms of the start line) is sent before the call
// ends even on a loaded machine.
const fakeCodexConv = `d=%[1]q
n=$(( $(cat "$d/calls" 2>/dev/null || echo 0) + 1 )); echo $n > "$d/calls"
printf '%%s\n' "$@" > "$d/argv.$n"
id="th-$n"; prev=""
for a in "$@"; do [ "$prev" = resume ] && id="$a"; prev="$a"; done
t=$(( $(cat "$d/turns.$id" 2>/dev/null || echo 0) + 1 )); echo $t > "$d/turns.$id"
printf '{"type":"thread.started","thread_id":"%%s"}\n' "$id"
printf '{"type":"item.started","item":{"id":"c","type":"command_execution","command":"/bin/bash -lc '"'"'make progress-marker TOKEN=abcdef123456'"'"'","status":"in_progress"}}\n'
sleep 1.5
printf '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"turn %%s of the thread"}}\n' "$t"
printf '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\n'
`

// approve approves the pending approval id of session sid.
func approve(t *testing.T, c *client.Conn, sid, id string) {
	t.Helper()
	if err := c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: id, Approved: true}); err != nil {
		t.Fatal(err)
	}
}

// approveNext waits for the next approval request of session sid's turn,
// approves it and returns it.
func approveNext(t *testing.T, c *client.Conn, sid string) *proto.ApprovalRequested {
	t.Helper()
	ap := last[*proto.ApprovalRequested](t, until(t, c, proto.EventApprovalRequested))
	approve(t, c, sid, ap.ApprovalID)
	return ap
}

// approveAndComplete approves the turn's delegation and returns the
// turn's events up to the call's completion.
func approveAndComplete(t *testing.T, c *client.Conn, sid string) []proto.Event {
	t.Helper()
	evs := until(t, c, proto.EventApprovalRequested)
	ap := last[*proto.ApprovalRequested](t, evs)
	approve(t, c, sid, ap.ApprovalID)
	evs = append(evs, until(t, c, proto.EventToolCompleted)...)
	return append(evs, until(t, c, proto.EventTurnCompleted)...)
}

type agentResult struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Status  string `json:"status"`
	Reply   string `json:"reply"`
}

func delegated(t *testing.T, evs []proto.Event) agentResult {
	t.Helper()
	all := ofType[*proto.ToolCompleted](evs)
	if len(all) == 0 {
		t.Fatalf("no tool.completed in %v", eventTypes(evs))
	}
	done := all[len(all)-1]
	var r agentResult
	if err := json.Unmarshal([]byte(done.Output), &r); err != nil {
		t.Fatalf("tool output %q: %v", done.Output, err)
	}
	return r
}

// TestConversationSurvivesDaemonRestart: a conversation with a delegated
// Codex, started in one daemon, continues in the next one after
// session.resume with the thread Codex reported; the progress of both
// runs reached the client and never the model; `scv agents
// conversations` lists it, and it goes with its session.
func TestConversationSurvivesDaemonRestart(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("d1", "agent_codex", `{"prompt":"start the work"}`))
	fm.Script(modeltest.Text("started"))
	root := t.TempDir()
	in := newInstance(t, providerConfig(fm.URL(), fakeCodex(t, root, fmt.Sprintf(fakeCodexConv, root))...))
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "delegate")
	evs := approveAndComplete(t, c, sid)
	r := delegated(t, evs)
	if r.Session != "codex-1" || r.Turn != 1 || r.Status != "completed" || r.Reply != "turn 1 of the thread" {
		t.Fatalf("first call: %+v", r)
	}
	var progress []string
	for _, p := range ofType[*proto.ToolProgress](evs) {
		progress = append(progress, p.Text)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "$ make progress-marker TOKEN=…") {
		t.Errorf("progress of the first run = %q", progress)
	}

	// The daemon restarts; the session is resumed on a new connection.
	c.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !d.wait(10 * time.Second) {
		t.Fatalf("daemon did not stop; stderr:\n%s", d.stderr)
	}
	fm.Script(modeltest.ToolCall("d2", "agent_codex", `{"prompt":"go on","session":"codex-1"}`))
	fm.Script(modeltest.Text("went on"))
	in.startDaemon(in.env)
	c = in.connect()
	resume(t, c, sid)
	sendTurn(t, c, sid, "continue the delegation")
	evs = approveAndComplete(t, c, sid)
	r = delegated(t, evs)
	if r.Session != "codex-1" || r.Turn != 2 || r.Reply != "turn 2 of the thread" {
		t.Fatalf("second call after the restart: %+v", r)
	}
	argv, _ := os.ReadFile(filepath.Join(root, "argv.2"))
	if !strings.Contains(string(argv), "\nresume\nth-1\ngo on\n") {
		t.Errorf("the second run did not resume thread th-1:\n%s", argv)
	}
	if len(ofType[*proto.ToolProgress](evs)) == 0 {
		t.Error("no progress from the second run")
	}
	// Neither the progress nor the thread id ever reached the model.
	for i, req := range fm.Requests() {
		if strings.Contains(string(req.Raw), "progress-marker") || strings.Contains(string(req.Raw), "th-1") {
			t.Errorf("model request %d carries progress or the vendor id:\n%s", i, req.Raw)
		}
	}
	c.Close()

	out := in.run(in.env, "", "agents", "conversations", sid)
	if out.code != 0 || !strings.Contains(out.stdout, "codex-1") || !strings.Contains(out.stdout, in.ws) || strings.Contains(out.stdout, "th-1") {
		t.Errorf("scv agents conversations: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
	// Deleting the session deletes its conversations.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rm := in.run(in.env, "", "sessions", "rm", sid)
		if rm.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions rm: %d %s", rm.code, rm.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out = in.run(in.env, "", "agents", "conversations", "--all")
	if out.code != 0 || !strings.Contains(out.stdout, "no conversations") {
		t.Errorf("after the session was deleted: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
}

// TestExecVerbosePrintsAgentProgress: `scv exec --verbose` prints a
// delegated agent's progress on stderr as it comes; without --verbose it
// does not.
func TestExecVerbosePrintsAgentProgress(t *testing.T) {
	fm := modeltest.New(t)
	root := t.TempDir()
	in := newInstance(t, providerConfig(fm.URL(), fakeCodex(t, root, fmt.Sprintf(fakeCodexConv, root))...))
	for _, verbose := range []bool{true, false} {
		fm.Script(modeltest.ToolCall("d1", "agent_codex", `{"prompt":"work"}`))
		fm.Script(modeltest.Text("done"))
		args := []string{"exec", "--yes", "delegate"}
		if verbose {
			args = []string{"exec", "--yes", "--verbose", "delegate"}
		}
		out := in.run(in.env, "", args...)
		if out.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, out.code, out.stderr)
		}
		line := "scv:   ~ $ make progress-marker TOKEN=…"
		if got := strings.Contains(out.stderr, line); got != verbose {
			t.Errorf("%v: progress line printed = %v, want %v; stderr:\n%s", args, got, verbose, out.stderr)
		}
		if strings.Contains(out.stdout, "progress-marker") || strings.Contains(out.stderr, "abcdef123456") {
			t.Errorf("%v: progress on stdout, or the token unredacted:\n%s\n%s", args, out.stdout, out.stderr)
		}
	}
}
