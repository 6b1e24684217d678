package config

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultsWithoutUserConfig(t *testing.T) {
	f := newFixture(t)
	l := mustLoad(t, f.opts())
	want := Defaults(f.home.SkillsDir())
	if diff := cmp.Diff(want, l.Config); diff != "" {
		t.Errorf("config without files (-want +got):\n%s", diff)
	}
	for _, s := range l.Explain() {
		if s.Origin != "default" {
			t.Errorf("%s: origin %q, want default", s.Key, s.Origin)
		}
	}
	if len(l.Files) != 0 {
		t.Errorf("files read: %v, want none", l.Files)
	}
}

func TestDefaultValues(t *testing.T) {
	// The defaults of docs/configuration.md, spelled out once more on purpose.
	c := Defaults("/h/skills")
	got := map[string]any{}
	walkLeaves(reflect.ValueOf(c), nil, nil, func(path []string, _ string, v reflect.Value) {
		got[joinKey(path)] = v.Interface()
	})
	want := map[string]any{
		"provider.active":           "openai",
		"providers.openai.wire_api": "responses", "providers.openai.base_url": "https://api.openai.com/v1",
		"providers.openai.model": "gpt-4.1-mini", "providers.openai.api_key_env": "OPENAI_API_KEY",
		"providers.openai.api_key": Secret(""), "providers.openai.headers": map[string]Secret{},
		"providers.openai.timeout_seconds": 600, "providers.openai.max_retries": 2, "providers.openai.reasoning_effort": "",
		"providers.anthropic.wire_api": "anthropic", "providers.anthropic.base_url": "https://api.anthropic.com",
		"providers.anthropic.model": "claude-sonnet-4-5", "providers.anthropic.api_key_env": "ANTHROPIC_API_KEY",
		"providers.anthropic.api_key": Secret(""), "providers.anthropic.headers": map[string]Secret{},
		"providers.anthropic.timeout_seconds": 600, "providers.anthropic.max_retries": 2, "providers.anthropic.reasoning_effort": "",
		"agent.max_steps": 128, "agent.system_prompt": DefaultSystemPrompt, "agent.max_delegation_depth": 2,
		"agent.max_conversations": 8, "agent.conversation_idle_seconds": 86400,
		"agent.max_background": 4, "agent.report_turns": "wait",
		"session.max_history_bytes": 16777216, "session.max_messages": 10000, "session.max_queued_turns": 16,
		"history.max_sessions": 2000, "history.max_age_days": 180,
		"context.max_tokens": 128000, "context.reserve_output_tokens": 8192, "context.safety_margin_tokens": 2048,
		"context.bytes_per_token": 3, "context.summary_max_chars": 6000,
		"tools.approval_policy": "ask-on-risk", "tools.command_timeout_seconds": 600, "tools.agent_timeout_seconds": 3600,
		"tools.max_timeout_seconds": 14400, "tools.output_limit_bytes": 65536, "tools.max_read_bytes": 262144,
		"tools.max_write_bytes": 1048576, "tools.bash_env_remove": []string{"@provider_keys"}, "tools.bash_login": true,
		"protocol.max_client_frame_bytes": 1048576, "protocol.max_server_frame_bytes": 8388608,
		"protocol.max_sessions_per_connection": 32, "protocol.max_sessions": 128,
		"provider_limits.max_sse_event_bytes": 1048576, "provider_limits.max_response_bytes": 4194304,
		"provider_limits.max_assistant_bytes": 1048576, "provider_limits.max_tool_calls": 32,
		"provider_limits.max_tool_arguments_bytes": 262144,
		"skills.user_dir":                          "/h/skills", "skills.project_dir": ".scv/skills", "skills.scan_projects": true,
		"session.max_prompt_bytes": 262144,
		"skills.max_skills":        128, "skills.max_skill_bytes": 262144,
		"web.enabled": true, "web.fetch_max_bytes": 2097152, "web.fetch_timeout_seconds": 30, "web.max_redirects": 5,
		"web.auto_approve_domains":    []string{"docs.rs", "doc.rust-lang.org", "pkg.go.dev", "go.dev", "docs.python.org", "developer.mozilla.org"},
		"web.allow_private_addresses": false, "web.search": "off", "web.searxng_url": "", "web.brave_url": "",
		"web.brave_api_key": Secret(""), "web.brave_api_key_env": "BRAVE_SEARCH_API_KEY", "web.max_search_results": 8,
		"clawbot.base_url":             "https://ilinkai.weixin.qq.com",
		"clawbot.max_conversations":    64,
		"clawbot.max_queue_per_sender": 8,
		"clawbot.max_queued_bytes":     4194304,
		"hooks.allow_workspace":        false,
		"hooks.run":                    []HookRun(nil),
		"approvals.rules":              []ApprovalRule(nil),
		"tui.notify":                   "bell", "tui.notify_after_seconds": 10,
		"sandbox.mode": "off", "sandbox.network": false, "sandbox.writable_roots": []string{}, "sandbox.best_effort": false,
		"sandbox.deny_read": []string{"~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gh", "~/.netrc", "~/_netrc", "~/.npmrc", "~/.pypirc",
			"~/.pgpass", "~/.git-credentials", "~/.docker/config.json", "~/.kube", "~/.config/gcloud", "@scv_home"},
		"sandbox.applies_to": []string{"bash"},
	}
	for _, a := range KnownAgents {
		for _, k := range []string{"command", "args", "prompt_args", "model_args", "effort_args"} {
			var zero any = (*[]string)(nil)
			if k == "command" {
				zero = ""
			}
			want["agents."+a+"."+k] = zero
		}
		want["agents."+a+".permissions"] = "default"
		want["agents."+a+".transport"] = "print"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if n := len(strings.Split(DefaultSystemPrompt, "\n")); n < 5 || n > 15 {
		t.Errorf("default system prompt has %d lines, want a concise ~10", n)
	}
}

func TestSpecsCoverEveryKey(t *testing.T) {
	var patterns []string
	// Named tables without defaults are walked through one example each.
	d := Defaults("/x")
	d.MCP.Servers = map[string]MCPServer{"example": defaultMCPServer()}
	openai := d.Providers["openai"]
	openai.Models = map[string]ModelInfo{"example": {}}
	d.Providers["openai"] = openai
	walkLeaves(reflect.ValueOf(d), nil, nil, func(_ []string, p string, _ reflect.Value) {
		if !slices.Contains(patterns, p) {
			patterns = append(patterns, p)
		}
	})
	var specKeys []string
	for k, s := range specs {
		specKeys = append(specKeys, k)
		if s.doc == "" {
			t.Errorf("%s has no explanation", k)
		}
	}
	slices.Sort(patterns)
	slices.Sort(specKeys)
	if diff := cmp.Diff(patterns, specKeys); diff != "" {
		t.Errorf("specs vs Config keys (-config +specs):\n%s", diff)
	}
}

func TestLayerOrder(t *testing.T) {
	f := newFixture(t)
	user := f.user(t, `
[provider]
active = "local"
[providers.local]
base_url = "http://127.0.0.1:8080/v1"
model = "user-model"
[tools]
command_timeout_seconds = 500
agent_timeout_seconds = 3000
output_limit_bytes = 60000
[web]
max_redirects = 3
`)
	project := f.project(t, `
[tools]
command_timeout_seconds = 400
agent_timeout_seconds = 2000
approval_policy = "ask-always"
`)
	extra := f.extra(t, `
[tools]
command_timeout_seconds = 300
[providers.local]
model = "extra-model"
wire_api = "chat"
`)
	opts := f.opts()
	opts.ExtraFile = extra
	opts.Env["SCV_MODEL"] = "env-model"
	opts.Env["SCV_BASE_URL"] = "http://127.0.0.1:9090/v1"
	opts.Env["SCV_API_KEY_ENV"] = "LOCAL_KEY"
	opts.Flags = Overrides{Model: "flag-model", ApprovalPolicy: "deny-on-risk"}
	l := mustLoad(t, opts)

	got := map[string][2]string{}
	for _, s := range l.Explain() {
		got[s.Key] = [2]string{s.Value, s.Origin}
	}
	want := map[string][2]string{
		"provider.active":                  {`"local"`, "user " + user},
		"providers.local.model":            {`"flag-model"`, "flag --model"},
		"providers.local.base_url":         {`"http://127.0.0.1:9090/v1"`, "env SCV_BASE_URL"},
		"providers.local.api_key_env":      {`"LOCAL_KEY"`, "env SCV_API_KEY_ENV"},
		"providers.local.wire_api":         {`"chat"`, "config " + extra},
		"providers.local.timeout_seconds":  {"600", "default"},
		"providers.openai.model":           {`"gpt-4.1-mini"`, "default"},
		"tools.command_timeout_seconds":    {"300", "config " + extra},
		"tools.agent_timeout_seconds":      {"2000", "project " + project},
		"tools.output_limit_bytes":         {"60000", "user " + user},
		"tools.approval_policy":            {`"deny-on-risk"`, "flag --approval-policy"},
		"web.max_redirects":                {"3", "user " + user},
		"tools.max_timeout_seconds":        {"14400", "default"},
		"providers.local.headers":          {"{}", "default"},
		"providers.local.max_retries":      {"2", "default"},
		"providers.local.reasoning_effort": {`""`, "default"},
		"providers.openai.api_key_env":     {`"OPENAI_API_KEY"`, "default"},
		"agents.claude.permissions":        {`"default"`, "default"},
		"skills.user_dir":                  {`"` + f.home.SkillsDir() + `"`, "default"},
		"context.max_tokens":               {"128000", "default"},
		"web.auto_approve_domains":         {`["docs.rs", "doc.rust-lang.org", "pkg.go.dev", "go.dev", "docs.python.org", "developer.mozilla.org"]`, "default"},
		"providers.local.api_key":          {`""`, "default"},
		"session.max_messages":             {"10000", "default"},
		"protocol.max_client_frame_bytes":  {"1048576", "default"},
		"provider_limits.max_tool_calls":   {"32", "default"},
		"web.search":                       {`"off"`, "default"},
		"agent.max_delegation_depth":       {"2", "default"},
		"skills.project_dir":               {`".scv/skills"`, "default"},
		"web.brave_api_key_env":            {`"BRAVE_SEARCH_API_KEY"`, "default"},
		"providers.openai.wire_api":        {`"responses"`, "default"},
		"providers.openai.timeout_seconds": {"600", "default"},
		"context.reserve_output_tokens":    {"8192", "default"},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	if diff := cmp.Diff([]File{{"user", user}, {"project", project}, {"config", extra}}, l.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	name, p := l.Config.ActiveProvider()
	if name != "local" || p.Model != "flag-model" || p.WireAPI != "chat" {
		t.Errorf("ActiveProvider = %q %+v", name, p)
	}
	if o := l.Origin("providers.local.headers.X-Anything"); o != "default" {
		t.Errorf("Origin of a header under defaults = %q", o)
	}
}

func TestExtraFileFromEnv(t *testing.T) {
	f := newFixture(t)
	extra := f.extra(t, "[agent]\nmax_steps = 7\n")
	opts := f.opts()
	opts.Env["SCV_CONFIG"] = extra
	l := mustLoad(t, opts)
	if l.Config.Agent.MaxSteps != 7 || l.Origin("agent.max_steps") != "config "+extra {
		t.Errorf("max_steps = %d from %q", l.Config.Agent.MaxSteps, l.Origin("agent.max_steps"))
	}
	// --config wins over SCV_CONFIG.
	other := writeFile(t, filepath.Join(f.dir, "other.toml"), "[agent]\nmax_steps = 9\n", 0o600)
	opts.ExtraFile = other
	if l := mustLoad(t, opts); l.Config.Agent.MaxSteps != 9 {
		t.Errorf("max_steps = %d, want 9 from --config", l.Config.Agent.MaxSteps)
	}
	// A named extra file must exist.
	opts.ExtraFile = filepath.Join(f.dir, "missing.toml")
	_, probs := problems(t, opts)
	if len(probs) != 1 || probs[0].Source != opts.ExtraFile || !strings.Contains(probs[0].Msg, "cannot read config config") {
		t.Errorf("missing extra file: %v", probs)
	}
}

func TestNoWorkspaceMeansNoProjectLayer(t *testing.T) {
	f := newFixture(t)
	f.project(t, "[tools]\napproval_policy = \"deny-on-risk\"\n")
	opts := f.opts()
	opts.Workspace = ""
	if l := mustLoad(t, opts); l.Config.Tools.ApprovalPolicy != "ask-on-risk" {
		t.Errorf("approval_policy = %q without a workspace", l.Config.Tools.ApprovalPolicy)
	}
}

func TestProjectConfigThatIsTheUserConfigIsSkipped(t *testing.T) {
	// Workspace = $HOME with SCV_HOME = ~/.scv: <ws>/.scv/config.toml is
	// the user config itself and is read once, as the user layer.
	dir := t.TempDir()
	f := fixture{dir: dir, ws: dir}
	f.home.Home = filepath.Join(dir, ".scv")
	if err := f.home.Ensure(); err != nil {
		t.Fatal(err)
	}
	user := f.user(t, "[providers.openai]\nmodel = \"mine\"\n")
	l := mustLoad(t, f.opts())
	if l.Config.Providers["openai"].Model != "mine" || l.Origin("providers.openai.model") != "user "+user {
		t.Errorf("model %q from %q", l.Config.Providers["openai"].Model, l.Origin("providers.openai.model"))
	}
}

func TestNewProfileStartsFromDefaults(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[providers.local]\n[providers.\"my.lab\"]\nmodel = \"m\"\nmax_retries = 0\n")
	l := mustLoad(t, f.opts())
	want := defaultProvider()
	if diff := cmp.Diff(want, l.Config.Providers["local"]); diff != "" {
		t.Errorf("empty [providers.local] (-want +got):\n%s", diff)
	}
	want.Model, want.MaxRetries = "m", 0
	if diff := cmp.Diff(want, l.Config.Providers["my.lab"]); diff != "" {
		t.Errorf("[providers.\"my.lab\"] (-want +got):\n%s", diff)
	}
	if o := l.Origin(`providers."my.lab".max_retries`); !strings.HasPrefix(o, "user ") {
		t.Errorf("origin of a quoted profile key = %q", o)
	}
}

func TestUserDirTilde(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[skills]\nuser_dir = \"~/my-skills\"\n")
	l := mustLoad(t, f.opts())
	if want := filepath.Join(f.dir, "my-skills"); l.Config.Skills.UserDir != want {
		t.Errorf("user_dir = %q, want %q", l.Config.Skills.UserDir, want)
	}
}

func TestAgentOverridesUnsetVersusEmpty(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[agents.codex]\ncommand = \"/opt/codex\"\nmodel_args = []\nargs = [\"exec\", \"--json\"]\npermissions = \"full\"\n")
	l := mustLoad(t, f.opts())
	empty, args := []string{}, []string{"exec", "--json"}
	want := AgentOverride{Command: "/opt/codex", Args: &args, ModelArgs: &empty, Permissions: "full", Transport: "print"}
	if diff := cmp.Diff(want, l.Config.Agents["codex"]); diff != "" {
		t.Errorf("codex (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(defaultAgent(), l.Config.Agents["claude"]); diff != "" {
		t.Errorf("claude (-want +got):\n%s", diff)
	}
}

func TestByteOrderMarkIgnored(t *testing.T) {
	f := newFixture(t)
	f.user(t, "\ufeff[agent]\nmax_steps = 5\n")
	if l := mustLoad(t, f.opts()); l.Config.Agent.MaxSteps != 5 {
		t.Errorf("max_steps = %d", l.Config.Agent.MaxSteps)
	}
}

func TestUserDirTildeWithoutHome(t *testing.T) {
	f := newFixture(t)
	path := f.user(t, "[skills]\nuser_dir = \"~/s\"\n")
	opts := f.opts()
	delete(opts.Env, "HOME")
	_, probs := problems(t, opts)
	want := []Problem{{path, 2, "skills.user_dir", `"~/s" starts with ~/ but HOME is not set; use an absolute path`}}
	if diff := cmp.Diff(want, probs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestKeyVariablesAndSecrets: the variables and values SCV treats as keys
// come from every profile and from web search, whatever is active.
func TestKeyVariablesAndSecrets(t *testing.T) {
	f := newFixture(t)
	f.user(t, `[providers.openai]
api_key_env = "FAKE_KEY"
headers = { X-Team = "team-header-secret" }
[providers.lab]
base_url = "http://lab/v1"
api_key_env = "LAB_TOKEN"
api_key = "inline-lab-key-123"
[web]
brave_api_key_env = "BRAVE_VAR"
[tools]
bash_env_remove = ["@provider_keys", "AWS_*"]
`)
	opts := f.opts()
	opts.Env["FAKE_KEY"], opts.Env["LAB_TOKEN"], opts.Env["BRAVE_VAR"] = "fake-key-value", "lab-env-value", "brave-value"
	l := mustLoad(t, opts)
	// Every profile counts, built-in ones included, active or not.
	vars := []string{"BRAVE_VAR"}
	for _, p := range l.Config.Providers {
		if p.APIKeyEnv != "" && !slices.Contains(vars, p.APIKeyEnv) {
			vars = append(vars, p.APIKeyEnv)
		}
	}
	slices.Sort(vars)
	if !slices.Contains(vars, "FAKE_KEY") || !slices.Contains(vars, "LAB_TOKEN") {
		t.Fatalf("profiles lost their api_key_env: %v", vars)
	}
	if diff := cmp.Diff(vars, l.Config.KeyVariables()); diff != "" {
		t.Errorf("KeyVariables (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(vars, "AWS_*"), l.Config.BashEnvRemoved()); diff != "" {
		t.Errorf("BashEnvRemoved (-want +got):\n%s", diff)
	}
	want := []string{"brave-value", "fake-key-value", "inline-lab-key-123", "lab-env-value", "team-header-secret"}
	if diff := cmp.Diff(want, l.Config.SecretValues(opts.Env)); diff != "" {
		t.Errorf("SecretValues (-want +got):\n%s", diff)
	}
}
