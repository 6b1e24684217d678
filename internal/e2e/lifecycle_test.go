package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestStdioEOFCancelsTurn: EOF on stdin while a bash command runs ends
// `scv server --stdio`, and the command it started is killed with it.
func TestStdioEOFCancelsTurn(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo $$ > pid.txt; exec sleep 120"}`))
	in := newInstance(t, providerConfig(fm.URL()))
	cmd := exec.Command(scvBin, "--scv-home", in.home, "--approval-policy", "ask-on-risk", "server", "--stdio")
	cmd.Dir, cmd.Env = in.ws, in.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, stdout := testutil.StartPiped(t, cmd)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	c := client.NewConn(stdout, stdin)
	defer c.Close()
	if _, err := c.Initialize(t.Context(), "e2e", "test"); err != nil {
		t.Fatal(err)
	}
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "sleep")
	approveNext(t, c, sid)
	until(t, c, proto.EventToolStarted)
	pid, err := strconv.Atoi(testutil.WaitLine(t, filepath.Join(in.ws, "pid.txt"), 30*time.Second))
	if err != nil || !testutil.Running(pid) {
		t.Fatalf("bash pid %d (%v) is not running", pid, err)
	}
	stdin.Close() // EOF

	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("scv server --stdio still running 10 s after EOF")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("scv server --stdio exit %d after EOF, want 0", code)
	}
	if !testutil.WaitGone(10*time.Second, pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the command (pid %d) outlived the stdio server", pid)
	}
}

// TestDaemonSlowClient: a socket client that stops reading while its turn
// streams is disconnected (docs/protocol.md: bounded writer queue, 3 s rule);
// its session goes and the daemon keeps serving.
func TestDaemonSlowClient(t *testing.T) {
	fm := modeltest.New(t)
	frags := make([]string, 3000)
	for i := range frags {
		frags[i] = strings.Repeat("z", 1000) + fmt.Sprint(i)
	}
	fm.Script(modeltest.Text(frags...))
	fm.Script(modeltest.Text("fine"))
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.env)

	nc, err := net.Dial("unix", in.socket())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	var line string
	for _, l := range []string{initLine, fmt.Sprintf(`{"type":"session.start","request_id":"s","cwd":%q}`, in.ws)} {
		if _, err := nc.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
		if line, err = r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	sid := between(line, `"session_id":"`, `"`)
	if sid == "" {
		t.Fatalf("no session id in %q", line)
	}
	if _, err := nc.Write([]byte(fmt.Sprintf(`{"type":"turn.start","request_id":"t","session_id":%q,"prompt":"flood"}`, sid) + "\n")); err != nil {
		t.Fatal(err)
	}
	// Now read nothing: the daemon must give up on this client.
	deadline := time.Now().Add(30 * time.Second)
	for in.status(t).Sessions != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := in.status(t).Sessions; n != 0 {
		t.Fatalf("a client that stopped reading still has %d sessions after 30 s", n)
	}
	// Draining what was buffered ends in EOF: the daemon closed the connection.
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	var rerr error
	for rerr == nil {
		_, rerr = r.ReadString('\n')
	}
	if ne, ok := rerr.(net.Error); ok && ne.Timeout() {
		t.Errorf("connection still open after the slow client was dropped")
	}
	// Others are still served.
	c := in.connect()
	s := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, s, "hi")
	if got := assistantTexts(until(t, c, proto.EventTurnCompleted)); len(got) != 1 || got[0] != "fine" {
		t.Errorf("answer after the slow client = %q", got)
	}
	select {
	case <-d.done:
		t.Errorf("daemon exited: %v", d.err)
	default:
	}
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}
