package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/sandbox"
)

// TestSandboxDefaults: the configuration's default deny_read is the
// sandbox's list (which the escape suite attacks) plus SCV's home, and the
// app expands it for the kinds of children the sandbox applies to.
func TestSandboxDefaults(t *testing.T) {
	var want []string
	for _, d := range sandbox.DefaultDenyRead {
		want = append(want, "~/"+d)
	}
	want = append(want, config.SCVHomeEntry)
	if diff := cmp.Diff(want, config.DefaultDenyRead); diff != "" {
		t.Errorf("config.DefaultDenyRead and sandbox.DefaultDenyRead differ (-sandbox +config):\n%s", diff)
	}
	cfg := config.Defaults("")
	cfg.Sandbox.Mode = config.SandboxWorkspaceWrite
	a := New(Options{Layout: paths.Layout{Home: "/scv"}, Env: map[string]string{"HOME": "/u"}})
	sb := a.Sandbox(&cfg, config.SandboxBash)
	if sb.Mode != sandbox.ModeWorkspaceWrite || sb.DenyRead[0] != "/u/.ssh" || sb.DenyRead[len(sb.DenyRead)-1] != "/scv" {
		t.Errorf("bash sandbox: %+v", sb)
	}
	if sb := a.Sandbox(&cfg, config.SandboxMCP); sb.On() {
		t.Errorf("the default applies_to sandboxes MCP servers: %+v", sb)
	}
}
