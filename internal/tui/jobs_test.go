package tui

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/proto"
)

// A background job's report shows as a notice saying what happens next;
// its text is made visible and bounded.
func TestJobReportedNotice(t *testing.T) {
	h := newHarness(t, nil)
	h.ev(&proto.JobReported{Job: "job-2", Agent: "codex", Status: "completed", Text: "[scv] job-2 (codex) completed: all \x1b[8mgreen"})
	f := h.frame()
	if !strings.Contains(f, "background job-2 (codex) completed: all") || !strings.Contains(f, "the model reads it with") || strings.Contains(f, "\x1b[8m") {
		t.Errorf("notice of a waiting report:\n%s", f)
	}
	h.ev(&proto.JobReported{Job: "job-3", Agent: "claude", Status: "failed", Text: "[scv] job-3 (claude) failed: " + strings.Repeat("x", 5000), Turn: true})
	f = h.frame()
	if !strings.Contains(f, "a turn starts for it") || strings.Count(f, "x") > jobNoticeBytes+40 {
		t.Errorf("notice of a report turn (%d x):\n%s", strings.Count(f, "x"), f)
	}
}
