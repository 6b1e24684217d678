package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// statOf returns the state and parent PID of pid from /proc/<pid>/stat.
func statOf(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0], ppid, true
}

// The daemon is a child subreaper: a process a tool call orphans while
// the call still runs (here one that escaped both the process group and
// the call's tag) reparents to the daemon instead of init, and when it
// exits the daemon reaps it, leaving no zombie.
func TestDaemonSubreaperReapsAdopted(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	pidFile := filepath.Join(in.ws, "orphan.pid")
	// The subshell exits at once, orphaning the escapee, which writes its
	// own PID (setsid may fork, so $! is not it), leaves the process group
	// and drops the call's tag with env -i, and exits by itself while the
	// call is still running.
	cmd := fmt.Sprintf(`( env -i setsid sh -c 'echo $$ > %s; exec sleep 1' >/dev/null 2>&1 & ); sleep 4`, pidFile)
	args := fmt.Sprintf(`{"command":%q}`, cmd)
	fm.Script(modeltest.ToolCall("c1", "bash", args))
	fm.Script(modeltest.Text("done"))
	d := in.startDaemon(in.env)
	daemonPID := d.cmd.Process.Pid

	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "leave something behind")
	approveNext(t, c, sid)
	orphan := testutil.WaitPID(t, pidFile, 10*time.Second)
	adopted := false
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		state, ppid, ok := statOf(orphan)
		if !ok {
			break // gone: exited and reaped
		}
		if ppid == daemonPID {
			adopted = true
		}
		if state == "Z" && time.Now().After(deadline.Add(-5*time.Second)) {
			t.Fatalf("orphan %d is a zombie of %d that nobody reaps", orphan, ppid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !adopted {
		t.Fatalf("orphan %d was never a child of the daemon %d (no subreaper?)", orphan, daemonPID)
	}
	if _, _, ok := statOf(orphan); ok {
		t.Fatalf("orphan %d still exists after 10 s", orphan)
	}
	until(t, c, proto.EventTurnCompleted)
}
