package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// fakeCodexJob is a fake Codex for background jobs, told what to do by its
// prompt (the last argument): "finish" waits for the file go, then replies
// job-reply-marker; any other prompt records its PID and that of a setsid
// descendant in pids.<prompt> and works for five minutes.
const fakeCodexJob = `d=%[1]q
p="${@: -1}"
if [ "$p" = finish ]; then
  while [ ! -e "$d/go" ]; do sleep 0.05; done
  printf '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"job-reply-marker"}}\n'
  printf '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\n'
  exit 0
fi
export PF="$d/pids.$p"
echo $$ >> "$PF"
setsid sh -c 'echo $$ >> "$PF"; exec sleep 300' </dev/null >/dev/null 2>&1 &
sleep 300
`

// jobInstance is an instance whose agent_codex is fakeCodexJob, with
// extra config lines, and the directory the fake writes to.
func jobInstance(t *testing.T, fm *modeltest.Server, extra ...string) (*instance, string) {
	t.Helper()
	root := t.TempDir()
	lines := append(fakeCodex(t, root, fmt.Sprintf(fakeCodexJob, root)), extra...)
	return newInstance(t, providerConfig(fm.URL(), lines...)), root
}

// backgroundCall is the model's agent_codex call with background: true.
func backgroundCall(id, prompt string) modeltest.Step {
	return modeltest.ToolCall(id, "agent_codex", fmt.Sprintf(`{"prompt":%q,"background":true}`, prompt))
}

// startJob runs a turn whose model starts one background job, approves
// it and returns the call's result once the turn completed.
func startJob(t *testing.T, c *client.Conn, sid string) map[string]any {
	t.Helper()
	sendTurn(t, c, sid, "start a background job")
	evs := approveAndComplete(t, c, sid)
	done := ofType[*proto.ToolCompleted](evs)
	var r map[string]any
	if len(done) == 0 || json.Unmarshal([]byte(done[len(done)-1].Output), &r) != nil {
		t.Fatalf("no JSON result of the background call in %v", eventTypes(evs))
	}
	return r
}

// waitLog polls until the daemon has logged want.
func waitLog(t *testing.T, d *daemonProc, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if strings.Contains(d.stderr.String(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never logged %q:\n%s", want, d.stderr)
		}
	}
}

// detached waits until the daemon has closed every session (it saw its
// clients go).
func detached(t *testing.T, in *instance) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); in.status(t).Sessions != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon kept the sessions open after their client left")
		}
	}
}

// gone waits for pids to be gone, at most the 2 s grace and a margin.
func gone(t *testing.T, what string, pids []int) {
	t.Helper()
	if !testutil.WaitGone(5*time.Second, pids...) {
		t.Fatalf("%s: processes %v survived", what, pids)
	}
}

// lastRequestHas says the model's latest request carries want.
func lastRequestHas(fm *modeltest.Server, want string) bool {
	reqs := fm.Requests()
	return len(reqs) > 0 && strings.Contains(string(reqs[len(reqs)-1].Raw), want)
}

// TestBackgroundJobReportedWhileDetached: a background job returns at
// once, keeps running after its client disconnected, and its end is
// stored in the session's history; the model reads the report with the
// next prompt after the session is resumed.
func TestBackgroundJobReportedWhileDetached(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(backgroundCall("b1", "finish"))
	fm.Script(modeltest.Text("started it"))
	in, root := jobInstance(t, fm)
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	r := startJob(t, c, sid)
	if r["job"] != "job-1" || r["agent"] != "codex" || r["status"] != "running" || r["background"] != true {
		t.Fatalf("background call result = %v", r)
	}
	c.Close()
	detached(t, in)
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitLog(t, d, "background job reported to a closed session")

	fm.Script(modeltest.Text("noted"))
	c = in.connect()
	resume(t, c, sid)
	if rep := last[*proto.JobReported](t, until(t, c, proto.EventJobReported)); rep.Job != "job-1" || rep.Status != "completed" {
		t.Errorf("job.reported after the resume = %+v", rep)
	}
	sendTurn(t, c, sid, "anything new?")
	until(t, c, proto.EventTurnCompleted)
	if !lastRequestHas(fm, "[scv] job-1 (codex) completed: job-reply-marker") {
		t.Errorf("the model's request after the resume lacks the report:\n%s", fm.Requests()[len(fm.Requests())-1].Raw)
	}
}

// TestBackgroundJobsCancelAndLimit: agent.max_background refuses a third
// job before any approval; agent_cancel stops job-1 and `scv agents kill`
// job-2, each with its setsid descendant; the kill is reported to the
// attached client (job.reported) and the model reads it next turn.
func TestBackgroundJobsCancelAndLimit(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(backgroundCall("b1", "one"))
	fm.Script(modeltest.Text("one started"))
	fm.Script(backgroundCall("b2", "two"))
	fm.Script(modeltest.Text("two started"))
	in, root := jobInstance(t, fm, "[agent]", "max_background = 2")
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	if r := startJob(t, c, sid); r["job"] != "job-1" {
		t.Fatalf("first job: %v", r)
	}
	if r := startJob(t, c, sid); r["job"] != "job-2" {
		t.Fatalf("second job: %v", r)
	}
	one := testutil.WaitPIDs(t, filepath.Join(root, "pids.one"), 2, 10*time.Second)
	two := testutil.WaitPIDs(t, filepath.Join(root, "pids.two"), 2, 10*time.Second)
	if len(one) < 2 || len(two) < 2 {
		t.Fatalf("the jobs' processes did not start: %v %v", one, two)
	}

	// A third is refused without an approval.
	fm.Script(backgroundCall("b3", "three"))
	fm.Script(modeltest.Text("refused"))
	sendTurn(t, c, sid, "a third")
	evs := until(t, c, proto.EventTurnCompleted)
	if len(ofType[*proto.ApprovalRequested](evs)) != 0 {
		t.Error("the job over agent.max_background asked for approval")
	}
	if done := ofType[*proto.ToolCompleted](evs); len(done) != 1 || done[0].Error != "limit" || !strings.Contains(done[0].Output, "agent.max_background") {
		t.Errorf("third job: %+v", done)
	}

	// agent_cancel stops job-1.
	fm.Script(modeltest.ToolCall("x1", "agent_cancel", `{"job":"job-1"}`))
	fm.Script(modeltest.Text("cancelled"))
	sendTurn(t, c, sid, "cancel job-1")
	evs = approveAndComplete(t, c, sid)
	var info struct{ Job, Status, Reason string }
	if done := ofType[*proto.ToolCompleted](evs); len(done) != 1 || json.Unmarshal([]byte(done[0].Output), &info) != nil ||
		info.Job != "job-1" || info.Status != "cancelled" || info.Reason != "cancelled by agent_cancel" {
		t.Errorf("agent_cancel: %+v", done)
	}
	gone(t, "agent_cancel", one)

	// scv agents kill stops job-2, named as the job (one session runs it).
	ps := in.run(in.env, "", "agents", "ps", "--json")
	var recs []struct{ Handle, Job string }
	if err := json.Unmarshal([]byte(ps.stdout), &recs); err != nil || len(recs) != 1 || recs[0].Job != "job-2" {
		t.Fatalf("agents ps --json: %v %s", err, ps.stdout)
	}
	if table := in.run(in.env, "", "agents", "ps"); !strings.Contains(table.stdout, "job-2") {
		t.Errorf("agents ps does not show the job:\n%s", table.stdout)
	}
	if k := in.run(in.env, "", "agents", "kill", "job-3"); k.code == 0 || !strings.Contains(k.stderr, "no running background job job-3") {
		t.Errorf("agents kill of a job that does not run: %d %s", k.code, k.stderr)
	}
	if k := in.run(in.env, "", "agents", "kill", "job-2"); k.code != 0 || k.stdout != "stopped job-2\n" {
		t.Fatalf("agents kill job-2: %d %q %s", k.code, k.stdout, k.stderr)
	}
	rep := last[*proto.JobReported](t, until(t, c, proto.EventJobReported))
	if rep.Job != "job-2" || rep.Status != "cancelled" || !strings.HasPrefix(rep.Text, "[scv] job-2 (codex) cancelled") || rep.Turn {
		t.Errorf("job.reported = %+v", rep)
	}
	gone(t, "scv agents kill", two)
	fm.Script(modeltest.Text("seen"))
	sendTurn(t, c, sid, "status?")
	until(t, c, proto.EventTurnCompleted)
	if !lastRequestHas(fm, "[scv] job-2 (codex) cancelled") {
		t.Error("the next request lacks job-2's report")
	}
}

// TestBackgroundJobsStopWithSessionAndDaemon: deleting a session stops
// its job (the client had left); `scv stop` stops the others; nothing is
// left running and no record is left.
func TestBackgroundJobsStopWithSessionAndDaemon(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(backgroundCall("b1", "deleted"))
	fm.Script(modeltest.Text("started"))
	fm.Script(backgroundCall("b2", "stopped"))
	fm.Script(modeltest.Text("started"))
	in, root := jobInstance(t, fm)
	d := in.startDaemon(in.env)
	c := in.connect()
	a := in.startSession(c, proto.SessionStart{}).SessionID
	startJob(t, c, a)
	b := in.startSession(c, proto.SessionStart{}).SessionID
	startJob(t, c, b)
	del := testutil.WaitPIDs(t, filepath.Join(root, "pids.deleted"), 2, 10*time.Second)
	stop := testutil.WaitPIDs(t, filepath.Join(root, "pids.stopped"), 2, 10*time.Second)
	c.Close()

	// The session is closed once the daemon saw the connection end.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rm := in.run(in.env, "", "sessions", "rm", a)
		if rm.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions rm: %d %s", rm.code, rm.stderr)
		}
	}
	gone(t, "session deleted", del)
	if !testutil.AnyRunning(stop...) {
		t.Fatal("the other session's job stopped with the deleted one")
	}

	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: %d %s", r.code, r.stderr)
	}
	if !d.wait(15 * time.Second) {
		t.Fatalf("daemon still running after scv stop; stderr:\n%s", d.stderr)
	}
	gone(t, "scv stop", stop)
	if ents, _ := os.ReadDir(filepath.Join(in.home, "run", "delegations")); len(ents) != 0 {
		t.Errorf("delegation records left: %v", ents)
	}

	// The stopped job's report is in its session's history.
	fm.Script(modeltest.Text("noted"))
	in.startDaemon(in.env)
	c = in.connect()
	resume(t, c, b)
	sendTurn(t, c, b, "what happened?")
	until(t, c, proto.EventTurnCompleted)
	if !lastRequestHas(fm, "[scv] job-1 (codex) cancelled (SCV stopped)") {
		t.Error("the request after the restart lacks the stopped job's report")
	}
}

// TestReportTurnsAuto: with agent.report_turns = "auto", a job ending
// while its session is open and idle starts a turn whose prompt is the
// report.
func TestReportTurnsAuto(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(backgroundCall("b1", "finish"))
	fm.Script(modeltest.Text("started it"))
	in, root := jobInstance(t, fm, "[agent]", `report_turns = "auto"`)
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	startJob(t, c, sid)
	fm.Script(modeltest.Text("acting on the report"))
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := last[*proto.JobReported](t, until(t, c, proto.EventJobReported))
	if !rep.Turn || rep.Status != "completed" {
		t.Errorf("job.reported = %+v, want a turn", rep)
	}
	evs := until(t, c, proto.EventTurnCompleted)
	if len(ofType[*proto.TurnStarted](evs)) != 1 {
		t.Errorf("report turn events: %v", eventTypes(evs))
	}
	if !lastRequestHas(fm, "[scv] job-1 (codex) completed: job-reply-marker") {
		t.Error("the report turn's request lacks the report")
	}
}
