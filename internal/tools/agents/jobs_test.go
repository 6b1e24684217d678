package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/tool"
)

// codexReply is a Codex stream with one reply.
const codexReply = `{"type":"thread.started","thread_id":"th-9"}
{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"background reply"}}
{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":4}}
`

// jobFixture is a codex fixture with a job table whose reports are kept.
func jobFixture(t *testing.T, max int, extraEnv ...string) (*fixture, func() []jobs.Report) {
	t.Helper()
	stream := filepath.Join(t.TempDir(), "stream.jsonl")
	if err := os.WriteFile(stream, []byte(codexReply), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "codex", append([]string{"FAKEAGENT_STREAM=" + stream}, extraEnv...)...)
	var mu sync.Mutex
	var got []jobs.Report
	f.opts.Jobs = jobs.New(jobs.Options{MaxPerSession: max, Report: func(r jobs.Report) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	}})
	t.Cleanup(f.opts.Jobs.Close)
	return f, func() []jobs.Report {
		f.opts.Jobs.Close()
		mu.Lock()
		defer mu.Unlock()
		return append([]jobs.Report(nil), got...)
	}
}

// runTool plans and runs a call of the named tool with args.
func (f *fixture) runTool(t *testing.T, name string, args string) (tool.Result, error) {
	t.Helper()
	for _, tl := range Available(f.opts) {
		if tl.Name() == name {
			p, err := tl.Plan(f.env(), json.RawMessage(args))
			if err != nil {
				return tool.Result{}, err
			}
			return p.Run(t.Context()), nil
		}
	}
	t.Fatalf("%s not offered", name)
	return tool.Result{}, nil
}

func TestBackgroundCallAndWait(t *testing.T) {
	f, reports := jobFixture(t, 4)
	p, err := f.call(t, "codex", map[string]any{"prompt": "build it", "background": true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Summary, "\nBackground: yes") || p.Risk != tool.Delegate {
		t.Errorf("plan: risk %s, summary:\n%s", p.Risk, p.Summary)
	}
	res := p.Run(t.Context())
	if !res.Success || res.Output != `{"job":"job-1","agent":"codex","status":"running","background":true}` {
		t.Fatalf("background call: %+v", res)
	}
	res, err = f.runTool(t, "agent_wait", `{"job":"job-1","timeout_seconds":60}`)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Job, Agent, Status string
		Result             Result
	}
	if err := json.Unmarshal([]byte(res.Output), &info); err != nil || len(res.Output) > f.env().OutputLimit {
		t.Fatalf("agent_wait output (%d bytes) %q: %v", len(res.Output), res.Output, err)
	}
	if info.Job != "job-1" || info.Status != "completed" || info.Result.Reply != "background reply" || info.Result.Session != "codex-1" {
		t.Errorf("agent_wait: %+v", info)
	}
	res, _ = f.runTool(t, "agent_status", `{}`)
	if !res.Success || !strings.Contains(res.Output, `"job":"job-1"`) || strings.Contains(res.Output, "background reply") {
		t.Errorf("agent_status listing (results left out): %s", res.Output)
	}
	// The model read the end itself: the report is not wanted.
	rs := reports()
	if len(rs) != 1 || rs[0].Wanted() || rs[0].Text != "[scv] job-1 (codex) completed: background reply" {
		t.Errorf("reports: %+v", rs)
	}
}

func TestBackgroundLimitAndCancel(t *testing.T) {
	f, reports := jobFixture(t, 1, "FAKEAGENT_SLEEP=300")
	p, err := f.call(t, "codex", map[string]any{"prompt": "a", "background": true})
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Run(t.Context()); !res.Success {
		t.Fatalf("first job: %+v", res)
	}
	te := planErr(t, f, "codex", map[string]any{"prompt": "b", "background": true})
	if te.Kind != tool.Limit || !strings.Contains(te.Message, "agent.max_background") {
		t.Errorf("second job: %+v", te)
	}
	recs, _ := f.opts.Tracker.List(false)
	for range 200 {
		if len(recs) == 1 {
			break
		}
		recs, _ = f.opts.Tracker.List(false)
		time.Sleep(10 * time.Millisecond)
	}
	if len(recs) != 1 || recs[0].Job != "job-1" || recs[0].Session != "sess1" {
		t.Fatalf("records while the job runs: %+v", recs)
	}
	res, err := f.runTool(t, "agent_cancel", `{"job":"job-1"}`)
	if err != nil || !strings.Contains(res.Output, `"status":"cancelled"`) || !strings.Contains(res.Output, `"reason":"cancelled by agent_cancel"`) {
		t.Fatalf("agent_cancel: %+v %v", res, err)
	}
	if recs, _ := f.opts.Tracker.List(true); len(recs) != 0 {
		t.Errorf("records after the cancel: %+v", recs)
	}
	if rs := reports(); len(rs) != 1 || rs[0].Status != jobs.Cancelled {
		t.Errorf("reports: %+v", rs)
	}
}

func TestJobToolRefusals(t *testing.T) {
	f, _ := jobFixture(t, 4)
	for _, args := range []string{`{"job":"job-0"}`, `{"job":"codex-1"}`, `{"job":"job-01"}`, `{"job":"job-1x"}`} {
		_, err := f.runTool(t, "agent_wait", args)
		te, ok := err.(*tool.Error)
		if !ok || te.Kind != tool.InvalidArguments || !strings.Contains(te.Message, "not a job handle") {
			t.Errorf("agent_wait %s: %v", args, err)
		}
	}
	res, err := f.runTool(t, "agent_status", `{"job":"job-7"}`)
	if err != nil || res.Error != tool.InvalidArguments || !strings.Contains(res.Output, "no such job") {
		t.Errorf("unknown job: %+v %v", res, err)
	}
	if _, err := f.runTool(t, "agent_wait", `{"job":"job-1","timeout_seconds":601}`); err == nil {
		t.Error("a wait over tools.max_timeout_seconds was accepted")
	}

	// Without a job table (no daemon) there is no background.
	plain := newFixture(t, "codex")
	if _, err := plain.call(t, "codex", map[string]any{"prompt": "a", "background": true}); err == nil {
		t.Error("background accepted without jobs")
	}
	for _, tl := range Available(plain.opts) {
		if strings.HasPrefix(tl.Name(), "agent_") && tl.Name() != "agent_codex" {
			t.Errorf("%s offered without jobs", tl.Name())
		}
		if strings.Contains(tl.Description(), "background") {
			t.Errorf("%s's description speaks of background without jobs", tl.Name())
		}
	}
}
