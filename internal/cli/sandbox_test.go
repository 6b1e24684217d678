package cli

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/sandbox"
)

// TestSandboxState: what scv status and scv sandbox check say for each
// kernel: all enforced, some rules missing (refused unless best_effort),
// and no Landlock at all.
func TestSandboxState(t *testing.T) {
	on := config.Defaults("")
	on.Sandbox.Mode = config.SandboxWorkspaceWrite
	best := on
	best.Sandbox.BestEffort = true
	full := sandbox.Report{Available: true, ABI: 7, Errata: 7, Seccomp: true}
	old := sandbox.Report{Available: true, ABI: 3, Seccomp: true}
	none := sandbox.Report{Reason: "no Landlock"}
	cases := []struct {
		name             string
		cfg              config.Config
		rep              sandbox.Report
		refuses, summary string
	}{
		{"off", config.Defaults(""), none, "", "off"},
		{"all enforced", on, full, "", "workspace-write, no network, for bash"},
		{"ABI 3 refuses", on, old, "this kernel cannot enforce IPC: signals only", "workspace-write, no network, for bash"},
		{"ABI 3 best effort", best, old, "", "best effort: 1 rule(s) not enforced"},
		{"no Landlock", on, none, "no Landlock; set sandbox.mode", "workspace-write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := sandboxState(&c.cfg, c.rep)
			if c.refuses == "" && st.Refuses != "" || !strings.Contains(st.Refuses, c.refuses) {
				t.Errorf("refuses %q, want %q", st.Refuses, c.refuses)
			}
			if !strings.Contains(st.Summary, c.summary) {
				t.Errorf("summary %q, want %q", st.Summary, c.summary)
			}
		})
	}
}
