package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/delegation"
)

// TestKillTargetOfJob: a job names its run when one session runs it; the
// same job handle in two sessions, or a job not running, is refused
// naming what to give instead.
func TestKillTargetOfJob(t *testing.T) {
	tr, err := delegation.New(delegation.Options{Dir: filepath.Join(t.TempDir(), "run", "delegations")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []delegation.Record{
		{Handle: "codex-aaaaaa", Agent: "codex", Session: "s1", Job: "job-1", PID: os.Getpid()},
		{Handle: "codex-bbbbbb", Agent: "codex", Session: "s2", Job: "job-1", PID: os.Getpid()},
		{Handle: "claude-cccccc", Agent: "claude", Session: "s2", Job: "job-2", PID: os.Getpid()},
	} {
		if err := tr.Start(r); err != nil {
			t.Fatal(err)
		}
	}
	if h, err := runOf(tr, "job-2"); err != nil || h != "claude-cccccc" {
		t.Errorf("job-2: %q %v", h, err)
	}
	if h, err := runOf(tr, "codex-bbbbbb"); err != nil || h != "codex-bbbbbb" {
		t.Errorf("a handle: %q %v", h, err)
	}
	if _, err := runOf(tr, "job-1"); err == nil || !strings.Contains(err.Error(), "codex-aaaaaa") || !strings.Contains(err.Error(), "codex-bbbbbb") {
		t.Errorf("job-1 of two sessions: %v", err)
	}
	if _, err := runOf(tr, "job-7"); err == nil || !strings.Contains(err.Error(), "no running background job job-7") {
		t.Errorf("job-7: %v", err)
	}
}
