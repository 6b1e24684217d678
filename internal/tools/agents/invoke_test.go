package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestArgvGolden pins the argument vector of docs/agents.md for every agent,
// permission mode and model/effort selection.
func TestArgvGolden(t *testing.T) {
	sel := Selection{SessionID: "SID", OutputFile: "/h/tmp/x/last-message.txt"}
	me := sel
	me.Model, me.Effort = "gpt-5.1", "high"
	tests := []struct {
		agent string
		full  bool
		sel   Selection
		want  string
	}{
		{"claude", false, sel, "-p|--output-format|stream-json|--verbose|--session-id|SID|P"},
		{"claude", false, me, "-p|--output-format|stream-json|--verbose|--session-id|SID|--model|gpt-5.1|--effort|high|P"},
		{"claude", true, sel, "-p|--permission-mode|bypassPermissions|--output-format|stream-json|--verbose|--session-id|SID|P"},
		{"codex", false, sel, "exec|--json|-o|/h/tmp/x/last-message.txt|P"},
		{"codex", false, me, `exec|--json|-o|/h/tmp/x/last-message.txt|-m|gpt-5.1|-c|model_reasoning_effort="high"|P`},
		{"codex", true, sel, `exec|--dangerously-bypass-approvals-and-sandbox|-c|web_search="live"|--json|-o|/h/tmp/x/last-message.txt|P`},
		{"grok", false, sel, "-p|P"},
		{"grok", false, me, "-m|gpt-5.1|--reasoning-effort|high|-p|P"},
		{"grok", true, me, "--always-approve|-m|gpt-5.1|--reasoning-effort|high|-p|P"},
		{"dsh", false, sel, "--profile|headless|P"},
		{"dsh", true, sel, "--profile|headless|P"},
		{"pi", false, sel, "-p|--mode|json|P"},
		{"pi", false, me, "-p|--mode|json|--model|gpt-5.1|--thinking|high|P"},
		{"pi", true, sel, "-p|--mode|json|P"},
	}
	for _, tt := range tests {
		name := tt.agent
		if tt.full {
			name += "/full"
		}
		if tt.sel.Model != "" {
			name += "/model"
		}
		t.Run(name, func(t *testing.T) {
			d, _ := Lookup(tt.agent)
			perm := "default"
			if tt.full {
				perm = "full"
			}
			a, err := Apply(d, Override{Permissions: perm})
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Argv(tt.sel, "P")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Split(tt.want, "|"), got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFullPermissionEnv(t *testing.T) {
	tests := []struct {
		agent string
		want  []string
	}{
		{"claude", []string{"IS_SANDBOX=1"}},
		{"dsh", []string{"DSH_PERMISSION_MODE=danger-full-access"}},
		{"codex", nil},
		{"pi", nil},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			d, _ := Lookup(tt.agent)
			def, _ := Apply(d, Override{})
			full, _ := Apply(d, Override{Permissions: "full"})
			base := def.Env(EnvSpec{AdapterHome: "/a", SCVHome: "/s"})
			var extra []string
			for _, kv := range full.Env(EnvSpec{AdapterHome: "/a", SCVHome: "/s"}) {
				if !slices.Contains(base, kv) {
					extra = append(extra, kv)
				}
			}
			if diff := cmp.Diff(tt.want, extra); diff != "" {
				t.Errorf("full-permission env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyOverride(t *testing.T) {
	d, _ := Lookup("claude")
	a, err := Apply(d, Override{Command: "/opt/claude", Args: []string{"-p", "--x"}, ModelArgs: []string{}, PromptArgs: []string{"--prompt"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Argv(Selection{SessionID: "S", Effort: "low"}, "P")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-p", "--x", "--output-format", "stream-json", "--verbose", "--session-id", "S", "--effort", "low", "--prompt", "P"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := a.Argv(Selection{Model: "sonnet"}, "P"); err == nil {
		t.Error("model accepted although model_args = []")
	}
	if _, err := Apply(d, Override{Permissions: "root"}); err == nil {
		t.Error("permissions = root accepted")
	}
}

func TestValidation(t *testing.T) {
	d, _ := Lookup("claude")
	a, _ := Apply(d, Override{})
	tests := []struct {
		name          string
		model, effort string
		prompt        string
		ok            bool
	}{
		{"alias", "sonnet", "", "hi", true},
		{"provider id", "scv/gpt-5.1", "", "hi", true},
		{"all punctuation", "a._:/@[]-b", "", "hi", true},
		{"128 chars", strings.Repeat("m", 128), "", "hi", true},
		{"129 chars", strings.Repeat("m", 129), "", "hi", false},
		{"leading dash", "-rm", "", "hi", false},
		{"leading at", "@x", "", "hi", false},
		{"space", "a b", "", "hi", false},
		{"semicolon", "a;b", "", "hi", false},
		{"non-ascii", "modèle", "", "hi", false},
		{"efforts", "", "xhigh", "hi", true},
		{"effort max", "", "max", "hi", true},
		{"bad effort", "", "extreme", "hi", false},
		{"prompt dash", "", "", "--help", false},
		{"prompt inner dash ok", "", "", "fix -x flag", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := a.Argv(Selection{Model: tt.model, Effort: tt.effort}, tt.prompt)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err == nil && argv[len(argv)-1] != tt.prompt {
				t.Errorf("prompt is not the last single argument: %q", argv)
			}
			if err == nil && tt.model != "" && !slices.Contains(argv, tt.model) {
				t.Errorf("model is not one argument: %q", argv)
			}
		})
	}
}

func TestEnvScrub(t *testing.T) {
	base := []string{
		"PATH=/usr/bin", "LANG=C.UTF-8", "HOME=/root", "TERM=xterm",
		"ANTHROPIC_API_KEY=a", "ANTHROPIC_BASE_URL=u", "CLAUDE_CODE_OAUTH_TOKEN=t", "CLAUDE_CONFIG_DIR=/c",
		"OPENAI_API_KEY=o", "OPENAI_BASE_URL=u", "CODEX_BASE_URL=u", "CODEX_HOME=/ch", "MY_SERVICE_API_KEY=k",
		"GROK_HOME=/g", "GROK_API_KEY=g", "DSH_HOME=/d", "DEEPSEEK_BASE_URL=u", "PI_CODING_AGENT_DIR=/p",
		"SCV_MODEL=m", "SCV_BASE_URL=u", "SCV_PROVIDER=p", "SCV_API_KEY_ENV=K", "SCV_CONFIG=/c", "SCV_HOME=/old",
		"SCV_PARENT=old", "SCV_DELEGATION_DEPTH=9", "XDG_CONFIG_HOME=/x",
	}
	kept := []string{"PATH=/usr/bin", "LANG=C.UTF-8", "TERM=xterm"}
	tests := []struct {
		agent string
		state []string
	}{
		{"claude", nil},
		{"codex", []string{"CODEX_HOME=/s/adapters/codex"}},
		{"grok", []string{"GROK_HOME=/s/adapters/grok/.grok", "GROK_DISABLE_AUTOUPDATER=1"}},
		{"dsh", []string{"DSH_HOME=/s/adapters/dsh/.dsh"}},
		{"pi", []string{"PI_CODING_AGENT_DIR=/s/adapters/pi/.pi/agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			d, _ := Lookup(tt.agent)
			a, _ := Apply(d, Override{})
			h := "/s/adapters/" + tt.agent
			got := a.Env(EnvSpec{Base: base, AdapterHome: h, SCVHome: "/s", Parent: "i/s/" + tt.agent + "-abcdef", Depth: 1})
			want := append(slices.Clone(kept),
				"HOME="+h, "SCV_HOME=/s",
				"XDG_CONFIG_HOME="+h+"/.config", "XDG_DATA_HOME="+h+"/.local/share",
				"XDG_STATE_HOME="+h+"/.local/state", "XDG_CACHE_HOME="+h+"/.cache")
			want = append(want, tt.state...)
			want = append(want, "SCV_PARENT=i/s/"+tt.agent+"-abcdef", "SCV_DELEGATION_DEPTH=1")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveOrder(t *testing.T) {
	home := t.TempDir()
	pathDir := t.TempDir()
	mk := func(dir, name string) string {
		os.MkdirAll(dir, 0o755)
		p := filepath.Join(dir, name)
		// Never executed: only its executable bit matters.
		if err := os.WriteFile(p, []byte("#!/bin/false\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	localGrok := mk(filepath.Join(home, ".grok", "bin"), "grok")
	mk(pathDir, "grok")
	localClaude := mk(filepath.Join(home, ".local", "bin"), "claude")
	mk(pathDir, "claude")
	pathPi := mk(pathDir, "pi")
	os.WriteFile(filepath.Join(pathDir, "dsh"), []byte("x"), 0o644) // not executable
	tests := []struct{ agent, want string }{
		{"grok", localGrok}, {"claude", localClaude}, {"pi", pathPi}, {"dsh", ""}, {"codex", ""},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			d, _ := Lookup(tt.agent)
			a, _ := Apply(d, Override{})
			got, err := a.Resolve(home, pathDir+":relative/dir")
			if tt.want == "" {
				if err == nil {
					t.Errorf("resolved %s, want not found", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Resolve = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
