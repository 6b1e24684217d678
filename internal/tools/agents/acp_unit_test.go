package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/tool"
)

// TestACPRisk maps the ACP tool kinds to SCV's risk classes.
func TestACPRisk(t *testing.T) {
	tests := []struct {
		kind, title, raw string
		paths            []string
		want             tool.Risk
	}{
		{"read", "Read src/main.go", `{"path":"src/main.go"}`, []string{"/w/src/main.go"}, tool.ReadOnly},
		{"search", "grep TODO", `{}`, nil, tool.ReadOnly},
		{"think", "thinking", ``, nil, tool.ReadOnly},
		{"read", "Read .env", `{"file_path":"/w/.env"}`, []string{"/w/.env"}, tool.Filesystem},
		{"read", "Read key", `{"file_path":"/home/u/.ssh/id_ed25519"}`, nil, tool.Filesystem},
		{"edit", "Edit a.go", `{}`, nil, tool.Filesystem},
		{"delete", "rm a", `{}`, nil, tool.Filesystem},
		{"move", "mv a b", `{}`, nil, tool.Filesystem},
		{"execute", "go test ./...", `{}`, nil, tool.Process},
		{"fetch", "https://example.com", `{}`, nil, tool.Network},
		{"other", "something", `{}`, nil, tool.Delegate},
		{"switch_mode", "plan", `{}`, nil, tool.Delegate},
	}
	for _, tt := range tests {
		if got := ACPRisk(tt.kind, tt.title, json.RawMessage(tt.raw), tt.paths); got != tt.want {
			t.Errorf("ACPRisk(%s, %q, %s) = %s, want %s", tt.kind, tt.title, tt.raw, got, tt.want)
		}
	}
}

// TestRawCommand reads an execute step's command.
func TestRawCommand(t *testing.T) {
	for raw, want := range map[string]string{
		`{"command":"go test ./..."}`:                       "go test ./...",
		`{"command":["/bin/bash","-lc","echo hi > a.txt"]}`: "echo hi > a.txt",
		`{"command":["ls","-la"]}`:                          "ls -la",
		`{"cmd":"x"}`:                                       "",
		`not json`:                                          "",
	} {
		if got := rawCommand(json.RawMessage(raw)); got != want {
			t.Errorf("rawCommand(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestApplyTransport: "acp" takes the ACP adapter's command and none of
// the print-mode arguments; a bad value, an agent without an adapter and
// full permissions are refused.
func TestApplyTransport(t *testing.T) {
	d, _ := Lookup("codex")
	a, err := Apply(d, Override{Transport: TransportACP})
	if err != nil || !a.ACP || a.Command != "codex-acp" || len(a.Args)+len(a.OutputArgs)+len(a.ModelArgs)+len(a.ResumeCommand) != 0 || !a.Resumes() {
		t.Errorf("codex over acp = %+v, %v", a, err)
	}
	if a, err := Apply(d, Override{Transport: TransportACP, Command: "/opt/codex-acp", Args: []string{"--flag"}}); err != nil || a.Command != "/opt/codex-acp" || strings.Join(a.Args, " ") != "--flag" {
		t.Errorf("codex over acp with its own command = %+v, %v", a, err)
	}
	if a, err := Apply(d, Override{}); err != nil || a.ACP || a.Command != "codex" {
		t.Errorf("codex by default = %+v, %v", a, err)
	}
	grok, _ := Lookup("grok")
	for _, tt := range []struct {
		d    Descriptor
		o    Override
		want string
	}{
		{d, Override{Transport: "http"}, `agents.codex.transport: "http" is not "print" or "acp"`},
		{grok, Override{Transport: TransportACP}, `agents.grok.transport: Grok Build has no ACP adapter SCV knows; use "print"`},
		{d, Override{Transport: TransportACP, Permissions: "full"}, `permissions = "full" does not apply to transport = "acp"`},
	} {
		if _, err := Apply(tt.d, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Apply(%s, %+v) = %v, want %q", tt.d.Name, tt.o, err, tt.want)
		}
	}
}

// TestWorkspacePaths: a step's locations become workspace-relative paths
// for grants; one outside the workspace makes the step never grantable.
func TestWorkspacePaths(t *testing.T) {
	ws := t.TempDir()
	rel, out := workspacePaths(ws, []string{ws + "/src/a.go", ws + "/b.txt"})
	if out || strings.Join(rel, ",") != "src/a.go,b.txt" {
		t.Errorf("inside: %v %v", rel, out)
	}
	for _, p := range []string{"/etc/passwd", ws + "/../x", "relative.txt"} {
		if _, out := workspacePaths(ws, []string{p}); !out {
			t.Errorf("%s counted as inside the workspace", p)
		}
	}
}
