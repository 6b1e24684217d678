package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestSandboxThroughDaemon: with sandbox.mode = "workspace-write" and the
// ask-unsandboxed policy, a daemon runs the model's bash calls unasked and
// confined. Each escape attempt is a real bash call through the daemon:
// exit 0 means breached. The daemon outlives the kill attempt, the
// listener counts no connection, nothing appears outside the workspace,
// and the allowed call works.
func TestSandboxThroughDaemon(t *testing.T) {
	testutil.RequireSandbox(t)
	l := testutil.Listen(t)

	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL(), "[tools]\napproval_policy = \"ask-unsandboxed\"\n[sandbox]\nmode = \"workspace-write\""))
	outside := filepath.Join(filepath.Dir(in.ws), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	d := in.startDaemon(in.env)
	pol := `{"mode":"workspace-write","network":true,"workspace":"/","best_effort":true}`
	attempts := []struct{ id, command string }{
		{"write", "echo x > " + outside + "/new"},
		{"config", "cat " + in.home + "/config.toml"},
		{"database", "head -c 100 " + in.home + "/state/scv.db"},
		{"kill", fmt.Sprintf("kill -TERM %d", d.cmd.Process.Pid)},
		{"tcp", "exec 3<>/dev/tcp/127.0.0.1/" + l.Port()},
		{"socket", fmt.Sprintf("%s --scv-home %s status | grep 'daemon: running'", scvBin, in.home)},
		{"helper", fmt.Sprintf("%s sandbox-exec '--policy=%s' -- /bin/sh -c 'echo x > %s/new'", scvBin, pol, outside)},
		{"scv-tools", fmt.Sprintf(`%s --scv-home %s tools call --yes bash '{"command":"echo x > %s/new"}'`, scvBin, in.home, outside)},
	}
	for _, a := range attempts {
		fm.Script(modeltest.ToolCall(a.id, "bash", testutil.JSON(map[string]string{"command": a.command})))
	}
	fm.Script(modeltest.ToolCall("allowed", "bash", `{"command":"echo ok > inside.txt && cat a.txt"}`))
	fm.Script(modeltest.Text("done"))

	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "try to escape")
	evs := until(t, c, proto.EventTurnCompleted)
	if n := len(ofType[*proto.ApprovalRequested](evs)); n != 0 {
		t.Errorf("%d approvals asked; ask-unsandboxed runs sandboxed calls unasked", n)
	}
	reqs := modelRequests(t, fm, len(attempts)+2)
	exit := func(i int, id string) (int, string) {
		out, ok := callOutput(reqs[i+1], id)
		if !ok {
			t.Fatalf("no output of call %s", id)
		}
		var r struct {
			ExitCode *int   `json:"exit_code"`
			Output   string `json:"output"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.ExitCode == nil {
			return -1, out
		}
		return *r.ExitCode, r.Output
	}
	for i, a := range attempts {
		if code, out := exit(i, a.id); code == 0 {
			t.Errorf("attempt %s exited 0: breached\n%s", a.id, out)
		} else if strings.Contains(out, "[provider") || strings.Contains(out, "SQLite format") {
			t.Errorf("attempt %s read SCV's files:\n%s", a.id, out)
		}
	}
	if code, out := exit(len(attempts), "allowed"); code != 0 || !strings.Contains(out, "hello from a.txt") {
		t.Errorf("allowed call: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(in.ws, "inside.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("write in the workspace: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files appeared outside the workspace: %v", ents)
	}
	if n := l.Accepted(); n != 0 {
		t.Errorf("the listener counted %d connections", n)
	}
	if err := d.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the daemon died: %v", err)
	}
	select {
	case <-d.done:
		t.Errorf("the daemon exited:\n%s", d.stderr)
	default:
	}
}
