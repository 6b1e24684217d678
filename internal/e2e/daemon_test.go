package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// checkOwnSession asserts every event belongs to sid and that seq rises by
// one from 1 (the seq rule of docs/protocol.md).
func checkOwnSession(t *testing.T, who, sid string, evs []proto.Event) {
	t.Helper()
	for i, ev := range evs {
		se, ok := ev.(proto.SessionEvent)
		if !ok {
			t.Errorf("%s event %d (%s) is not a session event", who, i, ev.EventType())
			continue
		}
		if h := se.Session(); h.SessionID != sid || h.Seq != uint64(i+1) {
			t.Errorf("%s event %d (%s): session %q seq %d, want session %q seq %d", who, i, ev.EventType(), h.SessionID, h.Seq, sid, i+1)
		}
	}
}

func assistantTexts(evs []proto.Event) []string {
	var out []string
	for _, ev := range ofType[*proto.AssistantCompleted](evs) {
		if ev.Content != "" {
			out = append(out, ev.Content)
		}
	}
	return out
}

// TestDaemonTwoClients interleaves two clients' turns: A's turn waits on an
// approval while B's turn runs from start to end, then A's completes.
func TestDaemonTwoClients(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("a1", "bash", `{"command":"echo from-a"}`)) // A, step 1
	fm.Script(modeltest.ToolCall("b1", "read", `{"path":"a.txt"}`))          // B, step 1
	fm.Script(modeltest.Text("B ", "done."))                                 // B, step 2
	fm.Script(modeltest.Text("A ", "done."))                                 // A, step 2
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)

	a, b := in.connect(), in.connect()
	sa := in.startSession(a, proto.SessionStart{}).SessionID
	sb := in.startSession(b, proto.SessionStart{}).SessionID
	if sa == "" || sa == sb {
		t.Fatalf("session ids %q and %q, want two distinct ids", sa, sb)
	}

	// Each connection has its own sessions: B cannot use A's.
	_, err := b.Call(t.Context(), &proto.TurnStart{SessionID: sa, Prompt: "not yours"})
	var re *client.RequestError
	if !errors.As(err, &re) || re.Code != proto.ErrSessionNotFound {
		t.Errorf("turn.start on another connection's session: %v, want session_not_found", err)
	}

	sendTurn(t, a, sa, "prompt A")
	evA := until(t, a, proto.EventApprovalRequested)
	sendTurn(t, b, sb, "prompt B")
	evB := until(t, b, proto.EventTurnCompleted)
	appr := last[*proto.ApprovalRequested](t, evA)
	approve(t, a, sa, appr.ApprovalID)
	evA = append(evA, until(t, a, proto.EventTurnCompleted)...)

	checkOwnSession(t, "A", sa, evA)
	checkOwnSession(t, "B", sb, evB)
	if diff := cmp.Diff([]string{"A done."}, assistantTexts(evA)); diff != "" {
		t.Errorf("A's answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"B done."}, assistantTexts(evB)); diff != "" {
		t.Errorf("B's answers (-want +got):\n%s", diff)
	}
	reqs := modelRequests(t, fm, 4)
	for i, want := range []string{"prompt A", "prompt B", "prompt B", "prompt A"} {
		if diff := cmp.Diff([]string{want}, userTexts(reqs[i])); diff != "" {
			t.Errorf("request %d user messages (-want +got):\n%s", i+1, diff)
		}
	}
	if out, _ := callOutput(reqs[2], "b1"); !strings.Contains(out, "hello from a.txt") {
		t.Errorf("B's read result = %q", out)
	}
	if out, _ := callOutput(reqs[3], "a1"); !strings.Contains(out, "from-a") {
		t.Errorf("A's bash result = %q", out)
	}
}

func TestDaemonSecondRefused(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	first := in.startDaemon(in.env)
	r := in.runWithin(10*time.Second, in.env, "", "run") // fails fast, not after a timeout
	if r.code == 0 {
		t.Fatalf("second scv run exited 0; stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "already running") {
		t.Errorf("second scv run's stderr does not say the daemon is already running:\n%s", r.stderr)
	}
	// The loser must not have touched the first daemon's socket.
	c := in.connect()
	if _, err := c.Call(t.Context(), &proto.DaemonStatusRequest{}); err != nil {
		t.Errorf("first daemon after the refused start: %v", err)
	}
	select {
	case <-first.done:
		t.Errorf("first daemon exited: %v", first.err)
	default:
	}
}

func TestDaemonModes(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	in.startDaemon(in.env)
	st, err := os.Lstat(in.socket())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 {
		t.Errorf("%s is %v, not a socket", in.socket(), st.Mode())
	}
	got := map[string]os.FileMode{"socket": st.Mode().Perm(), "home": testutil.Mode(t, in.home)}
	want := map[string]os.FileMode{"socket": 0o600, "home": 0o700}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

func TestDaemonStaleSocketReplaced(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	old := in.startDaemon(in.env)
	if err := syscall.Kill(-old.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-old.done
	if _, err := os.Lstat(in.socket()); err != nil {
		t.Fatalf("a SIGKILLed daemon should leave its socket behind: %v", err)
	}
	if _, err := client.Dial(t.Context(), in.socket()); err == nil {
		t.Fatal("the stale socket still accepts connections")
	}
	if r := in.run(in.env, "", "status"); r.code == 0 || !strings.Contains(r.stdout, "not running") {
		t.Errorf("scv status with a stale socket: exit %d stdout %q", r.code, r.stdout)
	}
	d := in.startDaemon(in.env)
	if got := in.status(t).PID; got != d.cmd.Process.Pid {
		t.Errorf("status pid = %d, want the new daemon's %d", got, d.cmd.Process.Pid)
	}
}

// hangingTurn starts a daemon whose model streams "partial " and then never
// answers, and a turn on it that has streamed that first delta.
func hangingTurn(t *testing.T) (*instance, *daemonProc, *client.Conn) {
	t.Helper()
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("partial "), modeltest.Hang())
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "hang")
	until(t, c, proto.EventAssistantDelta)
	return in, d, c
}

// TestDaemonSignals stops a daemon with a turn streaming from a model that
// never answers: on SIGTERM or SIGINT it exits within 5 s, cancels the turn
// and removes the socket (docs/runtime.md, "The daemon").
func TestDaemonSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			in, d, c := hangingTurn(t)

			start := time.Now()
			if err := d.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// Within 5 s, plus 1 s for a loaded machine.
			if !d.wait(6 * time.Second) {
				t.Fatalf("daemon still running 6 s after %v; stderr:\n%s", sig, d.stderr)
			}
			t.Logf("exited %v after %v", time.Since(start), sig)
			if code := d.exitCode(); code != 0 {
				t.Errorf("exit code %d after %v, want 0; stderr:\n%s", code, sig, d.stderr)
			}
			if _, err := os.Lstat(in.socket()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket after %v: %v, want it removed", sig, err)
			}
			// The client sees its connection end; the turn never completes.
			for ev := range c.Events() {
				if _, ok := ev.(*proto.TurnCompleted); ok {
					t.Errorf("turn completed during shutdown: %+v", ev)
				}
			}
		})
	}
}

// TestDaemonClientEOF: a client that hangs up mid-turn loses its sessions
// (its turn is cancelled) while the daemon goes on serving others.
func TestDaemonClientEOF(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("partial "), modeltest.Hang())
	fm.Script(modeltest.Text("still here"))
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.env)
	a := in.connect()
	sa := in.startSession(a, proto.SessionStart{}).SessionID
	sendTurn(t, a, sa, "hang")
	until(t, a, proto.EventAssistantDelta)
	a.Close()

	deadline := time.Now().Add(10 * time.Second)
	for in.status(t).Sessions != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := in.status(t).Sessions; n != 0 {
		t.Errorf("daemon still counts %d sessions 10 s after its only client hung up", n)
	}
	b := in.connect()
	sb := in.startSession(b, proto.SessionStart{}).SessionID
	sendTurn(t, b, sb, "hello")
	evs := until(t, b, proto.EventTurnCompleted)
	if diff := cmp.Diff([]string{"still here"}, assistantTexts(evs)); diff != "" {
		t.Errorf("second client's answer (-want +got):\n%s", diff)
	}
	select {
	case <-d.done:
		t.Errorf("daemon exited after a client EOF: %v", d.err)
	default:
	}
}

// status is `scv status --json` decoded.
type statusJSON struct {
	Running bool `json:"running"`
	proto.DaemonStatus
}

func (in *instance) status(t *testing.T) statusJSON {
	t.Helper()
	r := in.run(in.env, "", "status", "--json")
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("scv status --json: %v; stdout %q stderr %q", err, r.stdout, r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("scv status --json exit %d; stderr %q", r.code, r.stderr)
	}
	return st
}

func TestStatus(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	r := in.run(in.env, "", "status")
	if r.code == 0 || !strings.Contains(r.stdout, "not running") || !strings.Contains(r.stdout, in.socket()) {
		t.Errorf("status without a daemon: exit %d stdout %q", r.code, r.stdout)
	}
	r = in.run(in.env, "", "status", "--json")
	var down struct {
		Running bool   `json:"running"`
		Socket  string `json:"socket"`
		Sandbox struct {
			Mode string `json:"mode"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &down); r.code == 0 || err != nil || down.Running || down.Socket != in.socket() || down.Sandbox.Mode != "off" {
		t.Errorf("status --json without a daemon: exit %d stdout %q (%v)", r.code, r.stdout, err)
	}

	// The subreaper mechanism is forced: whether a cgroup can be made
	// depends on the machine.
	in.env = in.withEnv("SCV_PROCESS_TRACKING=subreaper")
	d := in.startDaemon(in.env)
	c := in.connect()
	in.startSession(c, proto.SessionStart{})
	in.startSession(c, proto.SessionStart{})
	pid := d.cmd.Process.Pid
	ver := strings.Fields(in.run(in.env, "", "version").stdout)[1]

	st := in.status(t)
	st.UptimeSeconds = 0
	if st.Database == nil || st.Database.FileBytes <= 0 {
		t.Errorf("status --json database = %+v, want the database with its size", st.Database)
	} else {
		st.Database.FileBytes, st.Database.FreeBytes = 0, 0
	}
	want := statusJSON{Running: true, DaemonStatus: proto.DaemonStatus{Version: ver, PID: pid, Sessions: 2,
		Database: &proto.Database{Path: filepath.Join(in.home, "state", "scv.db")},
		Provider: &proto.DaemonProvider{Profile: "openai", WireAPI: "responses", Model: "gpt-4.1-mini", BaseURL: "http://127.0.0.1:9",
			KeyEnv: "OPENAI_API_KEY", KeySet: true, ConfigFiles: []string{filepath.Join(in.home, "config.toml")}},
		ProcessTracking: "subreaper (this process adopts the orphans of its children)"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status --json (-want +got):\n%s", diff)
	}
	r = in.run(in.env, "", "status")
	for _, re := range []string{
		`scv daemon: running`,
		`pid:\s+` + strconv.Itoa(pid) + `\n`,
		`version:\s+` + regexp.QuoteMeta(ver) + `\n`,
		`uptime:\s+\S+`,
		`sessions:\s+2\n`,
		`delegations:\s+0 running, 0 orphans reaped`,
		`processes:\s+subreaper \(this process adopts the orphans of its children\)\n`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("scv status output does not match %q:\n%s", re, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("scv status exit %d", r.code)
	}
}

// TestStopEndsRun: scv stop ends a foreground daemon that has a turn
// streaming from a model that never answers.
func TestStopEndsRun(t *testing.T) {
	in, d, _ := hangingTurn(t)
	r := in.run(in.env, "", "stop")
	if r.code != 0 || !strings.Contains(r.stdout, "stopped") {
		t.Fatalf("scv stop: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !d.wait(10 * time.Second) {
		t.Fatal("scv run still running 10 s after scv stop")
	}
	if code := d.exitCode(); code != 0 {
		t.Errorf("scv run exit %d after scv stop; stderr:\n%s", code, d.stderr)
	}
	if _, err := os.Lstat(in.socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after scv stop: %v", err)
	}
	if r := in.run(in.env, "", "stop"); r.code == 0 {
		t.Errorf("scv stop without a daemon exited 0: %q", r.stdout)
	}
}

func TestStartStop(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	r := in.run(in.env, "", "start")
	m := regexp.MustCompile(`scv daemon started \(pid (\d+)\)`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("scv start: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	testutil.KillAtCleanup(t, pid)
	if st := in.status(t); !st.Running || st.PID != pid {
		t.Errorf("status after scv start: %+v, want running pid %d", st, pid)
	}
	if r := in.run(in.env, "", "start"); r.code != 0 || !strings.Contains(r.stdout, "already running") {
		t.Errorf("second scv start: exit %d stdout %q", r.code, r.stdout)
	}
	log, err := os.ReadFile(filepath.Join(in.home, "logs", "daemon.log"))
	if err != nil || !strings.Contains(string(log), "daemon listening") {
		t.Errorf("daemon.log: %v; %q", err, log)
	}
	r = in.run(in.env, "", "stop")
	if r.code != 0 || !strings.Contains(r.stdout, "stopped") {
		t.Fatalf("scv stop: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !testutil.WaitGone(10*time.Second, pid) {
		t.Errorf("daemon pid %d still runs 10 s after scv stop", pid)
	}
	if _, err := os.Lstat(in.socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after scv stop: %v", err)
	}
}

func TestDelegatedRefused(t *testing.T) {
	for _, cmd := range []string{"run", "start", "stop"} {
		t.Run(cmd, func(t *testing.T) {
			in := newInstance(t, providerConfig("http://127.0.0.1:9"))
			r := in.run(in.withEnv("SCV_DELEGATION_DEPTH=1"), "", cmd)
			if r.code != 2 {
				t.Errorf("scv %s with SCV_DELEGATION_DEPTH=1: exit %d, want 2; stderr %q", cmd, r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "delegated") {
				t.Errorf("stderr does not explain the refusal: %q", r.stderr)
			}
			if _, err := os.Lstat(in.socket()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket exists after a refused scv %s: %v", cmd, err)
			}
		})
	}
}

// TestSCVHomeFromEnv: SCV_HOME (no flag) places the socket, the lock and the
// log in that home and never falls back to ~/.scv.
func TestSCVHomeFromEnv(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	env := in.withEnv("SCV_HOME=" + in.home)
	r := in.runBare(time.Minute, env, "", "start")
	if r.code != 0 {
		t.Fatalf("scv start: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("scv start printed no pid: %q", r.stdout)
	}
	pid, _ := strconv.Atoi(m[1])
	testutil.KillAtCleanup(t, pid)
	for _, p := range []string{in.socket(), filepath.Join(in.home, "server.lock"), filepath.Join(in.home, "logs", "daemon.log")} {
		if !fileExists(p) {
			t.Errorf("%s missing", p)
		}
	}
	if r := in.runBare(time.Minute, env, "", "status", "--json"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf(`"pid":%d`, pid)) {
		t.Errorf("scv status with SCV_HOME: exit %d stdout %q", r.code, r.stdout)
	}
	if fileExists(filepath.Join(in.user, ".scv")) {
		t.Errorf("~/.scv was created although SCV_HOME is set")
	}
	if r := in.runBare(time.Minute, env, "", "stop"); r.code != 0 {
		t.Errorf("scv stop with SCV_HOME: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestDaemonQueue: a prompt sent while a turn runs is queued
// (queue.enqueued) and run after it, in order.
func TestDaemonQueue(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo one"}`))
	fm.Script(modeltest.Text("first"))
	fm.Script(modeltest.Text("second"))
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "prompt 1")
	evs := until(t, c, proto.EventApprovalRequested) // turn 1 is active
	if err := c.Send(&proto.TurnStart{Envelope: proto.Envelope{RequestID: "q2"}, SessionID: sid, Prompt: "prompt 2"}); err != nil {
		t.Fatal(err)
	}
	evs = append(evs, until(t, c, proto.EventQueueEnqueued)...)
	if q := last[*proto.QueueEnqueued](t, evs); q.RequestID != "q2" || q.QueueID == "" {
		t.Errorf("queue.enqueued = %+v, want request_id q2 and a queue_id", q)
	}
	appr := last[*proto.ApprovalRequested](t, evs[:len(evs)-1])
	approve(t, c, sid, appr.ApprovalID)
	evs = append(evs, until(t, c, proto.EventTurnCompleted)...)
	evs = append(evs, until(t, c, proto.EventTurnCompleted)...)
	checkOwnSession(t, "queue", sid, evs)
	if diff := cmp.Diff([]string{"first", "second"}, assistantTexts(evs)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	reqs := modelRequests(t, fm, 3)
	if diff := cmp.Diff([]string{"prompt 1", "prompt 2"}, userTexts(reqs[2])); diff != "" {
		t.Errorf("third request's user messages (-want +got):\n%s", diff)
	}
}

// TestStartRelativeHome: `scv --scv-home <relative> start` serves the home
// relative to where it was typed.
func TestStartRelativeHome(t *testing.T) {
	in := newInstance(t, providerConfig("http://127.0.0.1:9"))
	// A name nothing else uses: while the bug exists the daemon creates
	// /<rel>, and only that fresh directory may be removed again.
	rel := fmt.Sprintf("scv-e2e-relhome-%d-%d", os.Getpid(), time.Now().UnixNano())
	stray := filepath.Join("/", rel)
	if _, err := os.Lstat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists already (%v); refusing to run", stray, err)
	}
	parent := filepath.Dir(in.home)
	home := filepath.Join(parent, rel)
	if err := os.Rename(in.home, home); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Contain the bug if it comes back: the daemon logs its pid.
		if log, err := os.ReadFile(filepath.Join(home, "logs", "daemon.log")); err == nil {
			if m := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(log); m != nil {
				if pid, _ := strconv.Atoi(string(m[1])); pid > 0 && testutil.Running(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if fileExists(stray) {
			t.Errorf("the daemon used %s", stray)
			_ = os.RemoveAll(stray) // did not exist before this test
		}
	})
	in.ws = parent // run from the home's parent so the relative path names it
	run := func(args ...string) result {
		return in.runBare(time.Minute, in.env, "", append([]string{"--scv-home", rel}, args...)...)
	}
	if r := run("start"); r.code != 0 {
		t.Fatalf("scv start: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(home, "server.sock")) {
		t.Errorf("no socket in %s after scv --scv-home %s start", home, rel)
	}
	if r := run("stop"); r.code != 0 {
		t.Errorf("scv stop: exit %d stderr %q", r.code, r.stderr)
	}
}
