package jobs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// reports collects what a table hands its door.
type reports struct {
	mu   sync.Mutex
	list []Report
}

func (r *reports) add(x Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, x)
}

func (r *reports) all() []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Report(nil), r.list...)
}

// blocked is a run that ends when release is closed (completed) or its
// context ends (cancelled).
func blocked(release <-chan struct{}, reply string) Run {
	return func(ctx context.Context, job string) Outcome {
		select {
		case <-release:
			return Outcome{Status: Completed, Reply: reply, Result: []byte(`{"status":"completed"}`)}
		case <-ctx.Done():
			return Outcome{Status: Cancelled}
		}
	}
}

func TestLimitWaitAndReport(t *testing.T) {
	var rep reports
	tab := New(Options{MaxPerSession: 2, Report: rep.add})
	defer tab.Close()
	release := make(chan struct{})
	a, err := tab.Start("s1", "codex", blocked(release, "done: all tests pass"))
	if err != nil || a.Job != "job-1" || a.Status != Running {
		t.Fatalf("first job: %+v %v", a, err)
	}
	if b, err := tab.Start("s1", "claude", blocked(release, "")); err != nil || b.Job != "job-2" {
		t.Fatalf("second job: %+v %v", b, err)
	}
	var limit *LimitError
	if _, err := tab.Start("s1", "codex", blocked(release, "")); !errors.As(err, &limit) || limit.Max != 2 {
		t.Fatalf("third job in s1: %v, want a LimitError", err)
	}
	// The limit is per session, and handles count per session.
	if c, err := tab.Start("s2", "pi", blocked(release, "")); err != nil || c.Job != "job-1" {
		t.Fatalf("job of another session: %+v %v", c, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if info, err := tab.Wait(ctx, "s1", "job-1"); err != nil || info.Status != Running {
		t.Fatalf("wait with an ended context: %+v %v", info, err)
	}
	close(release)
	info, err := tab.Wait(t.Context(), "s1", "job-1")
	if err != nil || info.Status != Completed || string(info.Result) != `{"status":"completed"}` || info.EndedAt.IsZero() {
		t.Fatalf("job-1 after it ended: %+v %v", info, err)
	}
	tab.Wait(t.Context(), "s1", "job-2")
	tab.Wait(t.Context(), "s2", "job-1")
	if _, err := tab.Get("s1", "job-9"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown job: %v", err)
	}
	if _, err := tab.Get("s2", "job-2"); !errors.Is(err, ErrUnknown) {
		t.Errorf("another session's job: %v", err)
	}
	tab.Close() // waits for the reports
	var texts []string
	for _, r := range rep.all() {
		if r.Session == "s1" && r.Job == "job-1" {
			if r.Wanted() {
				t.Error("job-1's report is wanted after Wait returned its end")
			}
			texts = append(texts, r.Text)
		}
	}
	if len(texts) != 1 || texts[0] != "[scv] job-1 (codex) completed: done: all tests pass" {
		t.Errorf("reports of job-1: %q", texts)
	}
	if n := len(rep.all()); n != 3 {
		t.Errorf("%d reports, want 3", n)
	}
}

func TestCancelDeleteAndClose(t *testing.T) {
	var rep reports
	tab := New(Options{Report: rep.add})
	never := make(chan struct{})
	tab.Start("s1", "codex", blocked(never, ""))
	tab.Start("s2", "codex", blocked(never, ""))
	tab.Start("s3", "codex", blocked(never, ""))
	if _, err := tab.Cancel("s1", "job-1", "cancelled by agent_cancel"); err != nil {
		t.Fatal(err)
	}
	info, _ := tab.Wait(t.Context(), "s1", "job-1")
	if info.Status != Cancelled || info.Reason != "cancelled by agent_cancel" {
		t.Errorf("cancelled job: %+v", info)
	}
	tab.CancelSession("s2") // returns once its job ended
	if got := tab.List("s2"); len(got) != 0 {
		t.Errorf("a deleted session's jobs are listed: %+v", got)
	}
	tab.Close()
	if _, err := tab.Start("s1", "codex", blocked(never, "")); !errors.Is(err, ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
	got := map[string]string{}
	for _, r := range rep.all() {
		got[r.Session] = r.Text
	}
	want := map[string]string{
		"s1": "[scv] job-1 (codex) cancelled (cancelled by agent_cancel), with no reply.",
		"s3": "[scv] job-1 (codex) cancelled (SCV stopped), with no reply.",
	}
	if len(got) != len(want) || got["s1"] != want["s1"] || got["s3"] != want["s3"] {
		t.Errorf("reports = %q, want %q (none for the deleted s2)", got, want)
	}
}

// TestGoneSessionStopsItsJobs: a session deleted elsewhere is noticed by
// the check and its jobs stop unreported.
func TestGoneSessionStopsItsJobs(t *testing.T) {
	var rep reports
	var mu sync.Mutex
	deleted := map[string]bool{}
	tab := New(Options{Report: rep.add, CheckEvery: time.Millisecond, Gone: func(_ context.Context, s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return deleted[s]
	}})
	never := make(chan struct{})
	ended := make(chan struct{})
	tab.Start("s1", "codex", func(ctx context.Context, job string) Outcome {
		defer close(ended)
		return blocked(never, "")(ctx, job)
	})
	tab.Start("s2", "codex", blocked(never, ""))
	mu.Lock()
	deleted["s1"] = true
	mu.Unlock()
	<-ended
	tab.Close()
	for _, r := range rep.all() {
		if r.Session == "s1" {
			t.Errorf("a gone session got a report: %+v", r)
		}
	}
	if len(rep.all()) != 1 {
		t.Errorf("reports = %+v, want only s2's", rep.all())
	}
}

func TestReportTextBounded(t *testing.T) {
	long := strings.Repeat("é", ReportReplyBytes) // 2 bytes each
	got := ReportText(Info{Job: "job-3", Agent: "claude", Status: Failed}, long)
	if !strings.HasPrefix(got, "[scv] job-3 (claude) failed: éé") || len(got) > ReportReplyBytes+200 {
		t.Fatalf("report of a long reply: %d bytes, %q…", len(got), got[:60])
	}
	if !strings.Contains(got, `more bytes: agent_status {"job": "job-3"} shows the whole result]`) {
		t.Errorf("no pointer to the whole result: %q", got[len(got)-120:])
	}
	if strings.Contains(got, "\uFFFD") || !strings.Contains(got, "é [") {
		t.Errorf("cut inside a character: %q", got[len(got)-120:])
	}
}
