package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// TestReportDoor: a background job's report reaches an open session as
// job.reported and a history message the next request carries (one no
// longer wanted is dropped); a session no client has open gets the
// message in its stored history, which a resume brings back.
func TestReportDoor(t *testing.T) {
	fake := modeltest.New(t)
	for _, a := range []string{"first", "second", "third"} {
		fake.Script(modeltest.Text(a))
	}
	srv, ws := newTestServer(t, fake, "")
	c, end := connect(t, srv)
	started := startSession(t, c, ws)
	sid := started.SessionID
	turn(t, c, sid, "start")
	srv.Report(server.JobReport{Session: sid, Job: "job-1", Agent: "codex", Status: "completed", Text: "[scv] job-1 (codex) completed: stale-marker",
		Wanted: func() bool { return false }})
	srv.Report(server.JobReport{Session: sid, Job: "job-2", Agent: "codex", Status: "failed", Text: "[scv] job-2 (codex) failed: open-marker"})
	var rep *proto.JobReported
	select {
	case ev := <-c.Events():
		rep, _ = ev.(*proto.JobReported)
	case <-time.After(20 * time.Second):
		t.Fatal("no job.reported")
	}
	if rep == nil || rep.Job != "job-2" || rep.Status != "failed" || rep.Text != "[scv] job-2 (codex) failed: open-marker" || rep.Turn || rep.Seq == 0 {
		t.Fatalf("first event after the reports = %+v", rep)
	}
	turn(t, c, sid, "go on")
	reqs := fake.Requests()
	in := input(t, reqs[len(reqs)-1])
	if !strings.Contains(in, "open-marker") || strings.Contains(in, "stale-marker") {
		t.Errorf("the next request after the open report:\n%s", in)
	}

	end()
	srv.Report(server.JobReport{Session: sid, Job: "job-3", Agent: "claude", Status: "completed", Text: "[scv] job-3 (claude) completed: closed-marker"})
	srv.Report(server.JobReport{Session: "s_000000000000", Job: "job-1", Agent: "pi", Status: "completed", Text: "lost"}) // no such session: logged
	c, _ = connect(t, srv)
	resume(t, c, sid)
	// The client that opens it is told what it missed.
	select {
	case ev := <-c.Events():
		if rep, ok := ev.(*proto.JobReported); !ok || rep.Job != "job-3" || !strings.Contains(rep.Text, "closed-marker") {
			t.Errorf("first event after session.resumed = %#v, want job-3's report", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no job.reported after the resume")
	}
	turn(t, c, sid, "anything?")
	reqs = fake.Requests()
	in = input(t, reqs[len(reqs)-1])
	if !strings.Contains(in, "open-marker") || !strings.Contains(in, "closed-marker") || strings.Index(in, "open-marker") > strings.Index(in, "closed-marker") {
		t.Errorf("the request after the resume lacks a report or has them out of order:\n%s", in)
	}
}
