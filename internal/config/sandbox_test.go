package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sandboxUser = `[sandbox]
mode = "workspace-write"
network = true
writable_roots = ["/opt/cache", "~/go"]
applies_to = ["bash", "mcp"]
best_effort = true
`

// TestProjectCannotLoosenSandbox: a workspace config may only tighten the
// sandbox; each loosening is refused with its file, line and key.
func TestProjectCannotLoosenSandbox(t *testing.T) {
	runProjectCases(t, []projectCase{
		{"turn it off", sandboxUser, "[sandbox]\nmode = \"off\"\n",
			[]Problem{{"P", 2, "sandbox.mode", `a project config may only make the sandbox stricter (off < workspace-write < read-only): "off" is looser than "workspace-write" from the lower layers`}}},
		{"read-only to workspace-write", "[sandbox]\nmode = \"read-only\"\n", "[sandbox]\nmode = \"workspace-write\"\n",
			[]Problem{{"P", 2, "sandbox.mode", `a project config may only make the sandbox stricter (off < workspace-write < read-only): "workspace-write" is looser than "read-only" from the lower layers`}}},
		{"network on", "[sandbox]\nmode = \"workspace-write\"\n", "[sandbox]\nnetwork = true\n",
			[]Problem{{"P", 2, "sandbox.network", "a project config may only turn this off: the lower layers have it off"}}},
		{"add a writable root", sandboxUser, "[sandbox]\nwritable_roots = [\"/opt/cache\", \"/etc\"]\n",
			[]Problem{{"P", 2, "sandbox.writable_roots", `a project config may only remove entries from this list: "/etc" is not in ["/opt/cache", "~/go"] from the lower layers`}}},
		{"unhide a path", "", "[sandbox]\ndeny_read = [\"~/.ssh\"]\n",
			[]Problem{{"P", 2, "sandbox.deny_read", `a project config may only add entries to this list: it drops "~/.gnupg", which the lower layers give`}}},
		{"unsandbox mcp", sandboxUser, "[sandbox]\napplies_to = [\"bash\"]\n",
			[]Problem{{"P", 2, "sandbox.applies_to", `a project config may only add entries to this list: it drops "mcp", which the lower layers give`}}},
		{"best effort on", "[sandbox]\nmode = \"workspace-write\"\n", "[sandbox]\nbest_effort = true\n",
			[]Problem{{"P", 2, "sandbox.best_effort", "a project config may only turn this off: the lower layers have it off"}}},
		{"weaker policy", "", "[tools]\napproval_policy = \"ask-unsandboxed\"\n",
			[]Problem{{"P", 2, "tools.approval_policy", `a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): "ask-unsandboxed" is weaker than "ask-on-risk"`}}},
		{"unknown key", "", "[sandbox]\nallow_everything = true\n",
			[]Problem{{"P", 2, "sandbox.allow_everything", `unknown key "sandbox.allow_everything"`}}},
	})
}

func TestProjectTightensSandbox(t *testing.T) {
	f := newFixture(t)
	f.user(t, sandboxUser)
	f.project(t, "[sandbox]\nmode = \"read-only\"\nnetwork = false\nwritable_roots = [\"~/go\"]\ndeny_read = [\"~/.ssh\", \"~/.gnupg\", \"~/.aws\", \"~/.config/gh\", \"~/.netrc\", \"~/_netrc\", \"~/.npmrc\", \"~/.pypirc\", \"~/.pgpass\", \"~/.git-credentials\", \"~/.docker/config.json\", \"~/.kube\", \"~/.config/gcloud\", \"@scv_home\", \"/srv/secrets\"]\napplies_to = [\"bash\", \"mcp\", \"agents\"]\nbest_effort = false\n")
	l := mustLoad(t, f.opts())
	sb := l.Config.Sandbox
	if sb.Mode != SandboxReadOnly || sb.Network || sb.BestEffort || !sb.Applies(SandboxAgents) || len(sb.WritableRoots) != 1 {
		t.Errorf("tightened sandbox: %+v", sb)
	}
	w, d := sb.Paths(f.dir, f.home.Home)
	if diff := cmp.Diff([]string{filepath.Join(f.dir, "go")}, w); diff != "" {
		t.Errorf("writable roots (-want +got):\n%s", diff)
	}
	if d[0] != filepath.Join(f.dir, ".ssh") || d[len(d)-2] != f.home.Home || d[len(d)-1] != "/srv/secrets" {
		t.Errorf("deny_read expanded: %q", d)
	}
}

func TestSandboxValues(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Problem
	}{
		{"mode", "[sandbox]\nmode = \"strict\"\n", []Problem{{"F", 2, "sandbox.mode", `"strict" is not one of "off", "workspace-write", "read-only"`}}},
		{"relative root", "[sandbox]\nwritable_roots = [\"cache\"]\n", []Problem{{"F", 2, "sandbox.writable_roots", `"cache" must be an absolute path or start with ~/`}}},
		{"root of everything", "[sandbox]\nwritable_roots = [\"/\"]\n", []Problem{{"F", 2, "sandbox.writable_roots", `"/" would make every file writable; name the directories commands may write to`}}},
		{"relative deny", "[sandbox]\ndeny_read = [\".ssh\"]\n", []Problem{{"F", 2, "sandbox.deny_read", `".ssh" must be an absolute path, start with ~/, or be "@scv_home"`}}},
		{"applies_to", "[sandbox]\napplies_to = [\"web\"]\n", []Problem{{"F", 2, "sandbox.applies_to", `"web" is not one of "bash", "mcp", "agents"`}}},
		{"type", "[sandbox]\nnetwork = \"no\"\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := userProblems(t, tt.body)
			if tt.want == nil {
				if len(probs) != 1 || probs[0].Key != "sandbox.network" || probs[0].Line != 2 {
					t.Errorf("problems %+v, want one for sandbox.network at line 2", probs)
				}
				return
			}
			if diff := cmp.Diff(tt.want, probs); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSandboxHomeMissing(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[sandbox]\nmode = \"workspace-write\"\n")
	opts := f.opts()
	opts.Env = map[string]string{}
	_, probs := problems(t, opts)
	if len(probs) != 1 || probs[0].Key != "sandbox.deny_read" {
		t.Errorf("problems %+v, want one for sandbox.deny_read (its ~/ entries need HOME)", probs)
	}
	f.user(t, "")
	if _, probs := problems(t, opts); len(probs) != 0 {
		t.Errorf("with the sandbox off a missing HOME is fine, got %+v", probs)
	}
}
