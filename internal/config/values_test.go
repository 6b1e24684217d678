package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		name, body string
		want       Problem
	}{
		{"wire_api", "[providers.openai]\nwire_api = \"grpc\"\n",
			Problem{"F", 2, "providers.openai.wire_api", `"grpc" is not one of "responses", "chat", "anthropic"`}},
		{"approval_policy", "[tools]\napproval_policy = \"sometimes\"\n",
			Problem{"F", 2, "tools.approval_policy", `"sometimes" is not one of "ask-on-risk", "ask-always", "deny-on-risk", "ask-unsandboxed"`}},
		{"permissions", "[agents.claude]\npermissions = \"yolo\"\n",
			Problem{"F", 2, "agents.claude.permissions", `"yolo" is not one of "default", "full"`}},
		{"transport", "[agents.codex]\ntransport = \"http\"\n",
			Problem{"F", 2, "agents.codex.transport", `"http" is not one of "print", "acp"`}},
		{"search", "[web]\nsearch = \"google\"\n",
			Problem{"F", 2, "web.search", `"google" is not one of "off", "provider", "searxng", "brave"`}},
		{"negative limit", "[tools]\nmax_read_bytes = -1\n",
			Problem{"F", 2, "tools.max_read_bytes", "-1 is below the least allowed value 1"}},
		{"zero limit", "[agent]\nmax_steps = 0\n",
			Problem{"F", 2, "agent.max_steps", "0 is below the least allowed value 1"}},
		{"clawbot bound", "[clawbot]\nmax_conversations = 0\n",
			Problem{"F", 2, "clawbot.max_conversations", "0 is below the least allowed value 1"}},
		{"negative retries", "[providers.openai]\nmax_retries = -1\n",
			Problem{"F", 2, "providers.openai.max_retries", "-1 is below the least allowed value 0"}},
		{"base_url scheme", "[providers.openai]\nbase_url = \"ftp://x/v1\"\n",
			Problem{"F", 2, "providers.openai.base_url", `"ftp://x/v1" is not an absolute http:// or https:// URL`}},
		{"base_url relative", "[providers.openai]\nbase_url = \"/v1\"\n",
			Problem{"F", 2, "providers.openai.base_url", `"/v1" is not an absolute http:// or https:// URL`}},
		{"base_url credentials", "[providers.openai]\nbase_url = \"https://u:p@h/v1\"\n",
			Problem{"F", 2, "providers.openai.base_url", "must not embed credentials (user:password@); use api_key_env or headers instead"}},
		{"unparsable url with credentials", "[web]\nsearxng_url = \"ht tp://u:hunter2@h\"\n",
			Problem{"F", 2, "web.searxng_url", "must not embed credentials (user:password@); use api_key_env or headers instead"}},
		{"empty model", "[providers.openai]\nmodel = \"\"\n",
			Problem{"F", 2, "providers.openai.model", "must not be empty"}},
		{"api_key_env", "[providers.openai]\napi_key_env = \"MY-KEY\"\n",
			Problem{"F", 2, "providers.openai.api_key_env", `"MY-KEY" is not an environment variable name`}},
		{"reasoning_effort", "[providers.openai]\nreasoning_effort = \"very high\"\n",
			Problem{"F", 2, "providers.openai.reasoning_effort", `"very high" is not an effort level such as low, medium or high`}},
		{"header name", "[providers.openai.headers]\n\"Bad Header\" = \"v\"\n",
			Problem{"F", 1, "providers.openai.headers", `"Bad Header" is not a valid HTTP header name`}},
		{"header value", "[providers.openai]\nheaders = { X-A = \"a\\nb\" }\n",
			Problem{"F", 2, "providers.openai.headers", `the value of header "X-A" contains a line break or NUL`}},
		{"domain with scheme", "[web]\nauto_approve_domains = [\"https://docs.rs\"]\n",
			Problem{"F", 2, "web.auto_approve_domains", `"https://docs.rs" is not a host name or *.host (no scheme, port, path or inner *)`}},
		{"domain inner wildcard", "[web]\nauto_approve_domains = [\"a.*.com\"]\n",
			Problem{"F", 2, "web.auto_approve_domains", `"a.*.com" is not a host name or *.host (no scheme, port, path or inner *)`}},
		{"bash_env_remove entry", "[tools]\nbash_env_remove = [\"OPENAI_API_KEY\", \"AWS_*\", \"MY-VAR\"]\n",
			Problem{"F", 2, "tools.bash_env_remove", `"MY-VAR" is not a variable name, a NAME* prefix or "@provider_keys"`}},
		{"bash_env_remove inner star", "[tools]\nbash_env_remove = [\"A*B\"]\n",
			Problem{"F", 2, "tools.bash_env_remove", `"A*B" is not a variable name, a NAME* prefix or "@provider_keys"`}},
		{"searxng_url", "[web]\nsearxng_url = \"searx.local\"\n",
			Problem{"F", 2, "web.searxng_url", `"searx.local" is not an absolute http:// or https:// URL`}},
		{"project_dir absolute", "[skills]\nproject_dir = \"/etc\"\n",
			Problem{"F", 2, "skills.project_dir", `"/etc" must be a relative path inside the workspace (no leading /, no ..)`}},
		{"project_dir escape", "[skills]\nproject_dir = \"a/../../x\"\n",
			Problem{"F", 2, "skills.project_dir", `"a/../../x" must be a relative path inside the workspace (no leading /, no ..)`}},
		{"user_dir relative", "[skills]\nuser_dir = \"skills\"\n",
			Problem{"F", 2, "skills.user_dir", `"skills" must be an absolute path or start with ~/`}},
		{"model_args without placeholder", "[agents.claude]\nmodel_args = [\"--model\"]\n",
			Problem{"F", 2, "agents.claude.model_args", "must hold {model} in one argument (or be [] to not offer the option)"}},
		{"effort_args without placeholder", "[agents.pi]\neffort_args = [\"--thinking\", \"{model}\"]\n",
			Problem{"F", 2, "agents.pi.effort_args", "must hold {effort} in one argument (or be [] to not offer the option)"}},
		{"empty command", "[agents.grok]\ncommand = \"\"\n",
			Problem{"F", 2, "agents.grok.command", "must not be empty"}},
		{"empty active", "[provider]\nactive = \"\"\n",
			Problem{"F", 2, "provider.active", "must not be empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff([]Problem{tt.want}, userProblems(t, tt.body)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidValuesAccepted(t *testing.T) {
	f := newFixture(t)
	f.user(t, `
[providers.openai]
headers = { "OpenAI-Organization" = "org-1" }
reasoning_effort = "xhigh"
api_key_env = ""
[agent]
max_delegation_depth = 0
[context]
safety_margin_tokens = 0
[web]
max_redirects = 0
auto_approve_domains = ["*.Example.ORG.", "docs.rs"]
[skills]
project_dir = "tools/skills"
[agents.dsh]
model_args = []
effort_args = ["--effort={effort}"]
`)
	l := mustLoad(t, f.opts())
	if got := l.Config.Web.AutoApproveDomains; !cmp.Equal(got, []string{"*.Example.ORG.", "docs.rs"}) {
		t.Errorf("auto_approve_domains = %q", got)
	}
	if k, err := l.Config.APIKey(map[string]string{"OPENAI_API_KEY": "sk-x"}); err != nil || k != "" {
		t.Errorf("keyless profile: APIKey = %q, %v", k.Reveal(), err)
	}
}

func TestCrossFieldRules(t *testing.T) {
	tests := []struct {
		name, body string
		env        map[string]string
		want       Problem
	}{
		{"command timeout above max", "[tools]\ncommand_timeout_seconds = 20000\n", nil,
			Problem{"F", 2, "tools.command_timeout_seconds", "20000 must not exceed tools.max_timeout_seconds = 14400 (default)"}},
		{"agent timeout above max", "[tools]\nmax_timeout_seconds = 1000\n", nil,
			Problem{"default", 0, "tools.agent_timeout_seconds", "3600 must not exceed tools.max_timeout_seconds = 1000 (user F)"}},
		{"reserve plus margin", "[context]\nmax_tokens = 10240\n", nil,
			Problem{"default", 0, "context.reserve_output_tokens", "8192 plus context.safety_margin_tokens = 2048 (default) must be less than context.max_tokens = 10240 (user F)"}},
		{"client frame above server frame", "[protocol]\n\nmax_client_frame_bytes = 9000000\n", nil,
			Problem{"F", 3, "protocol.max_client_frame_bytes", "9000000 must not exceed protocol.max_server_frame_bytes = 8388608 (default)"}},
		{"output above server frame", "[protocol]\nmax_server_frame_bytes = 65535\nmax_client_frame_bytes = 100\n", nil,
			Problem{"default", 0, "tools.output_limit_bytes", "65536 must not exceed protocol.max_server_frame_bytes = 65535 (user F)"}},
		{"prompt above the largest limit", "[protocol]\nmax_server_frame_bytes = 100000000\nmax_client_frame_bytes = 100000000\n[session]\nmax_prompt_bytes = 70000000\n", nil,
			Problem{"F", 5, "session.max_prompt_bytes", "70000000 is above the largest allowed prompt limit, 67108864"}},
		{"sse event above response", "[provider_limits]\nmax_sse_event_bytes = 5000000\n", nil,
			Problem{"F", 2, "provider_limits.max_sse_event_bytes", "5000000 must not exceed provider_limits.max_response_bytes = 4194304 (default)"}},
		{"assistant above response", "[provider_limits]\nmax_assistant_bytes = 5000000\n", nil,
			Problem{"F", 2, "provider_limits.max_assistant_bytes", "5000000 must not exceed provider_limits.max_response_bytes = 4194304 (default)"}},
		{"tool arguments above response", "[provider_limits]\nmax_response_bytes = 200000\nmax_sse_event_bytes = 1000\nmax_assistant_bytes = 1000\n", nil,
			Problem{"default", 0, "provider_limits.max_tool_arguments_bytes", "262144 must not exceed provider_limits.max_response_bytes = 200000 (user F)"}},
		{"searxng without url", "[web]\nsearch = \"searxng\"\n", nil,
			Problem{"F", 2, "web.search", `"searxng" needs web.searxng_url, the base URL of your SearXNG instance`}},
		{"brave without key", "[web]\nsearch = \"brave\"\n", nil,
			Problem{"F", 2, "web.search", `web.search = "brave" needs a Brave Search API key: set the environment variable BRAVE_SEARCH_API_KEY (named by web.brave_api_key_env)`}},
		{"provider search on chat", "[web]\nsearch = \"provider\"\n[providers.openai]\nwire_api = \"chat\"\n", nil,
			Problem{"F", 2, "web.search", `"provider" needs the active profile's wire_api = "responses" or "anthropic", but providers.openai.wire_api = "chat" (user F)`}},
		{"anthropic wire at OpenAI's URL", "[provider]\nactive = \"lab\"\n[providers.lab]\nwire_api = \"anthropic\"\n", nil,
			Problem{"default", 0, "providers.lab.base_url", `"https://api.openai.com/v1" is OpenAI's endpoint but providers.lab.wire_api = "anthropic" (user F): set base_url = "https://api.anthropic.com" or your gateway's URL`}},
		{"acp without an adapter", "[agents.grok]\ntransport = \"acp\"\n", nil,
			Problem{"F", 2, "agents.grok.transport", `grok has no ACP adapter SCV knows (those of claude, codex, pi do): use "print"`}},
		{"acp with full permissions", "[agents.codex]\ntransport = \"acp\"\npermissions = \"full\"\n", nil,
			Problem{"F", 2, "agents.codex.transport", `"acp" sends every step the agent asks permission for to SCV's approvals, which permissions = "full" (user F) would bypass: remove one of them`}},
		{"active names no profile", "[provider]\nactive = \"nope\"\n", nil,
			Problem{"F", 2, "provider.active", `no provider profile "nope"; defined profiles: "anthropic", "openai" (add a [providers.nope] table to the user config)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff([]Problem{tt.want}, userProblems(t, tt.body)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCrossFieldSatisfied(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[web]\nsearch = \"brave\"\n[tools]\ncommand_timeout_seconds = 14400\n")
	opts := f.opts()
	opts.Env["BRAVE_SEARCH_API_KEY"] = "brave-secret"
	l := mustLoad(t, opts)
	if k, err := l.Config.BraveAPIKey(opts.Env); err != nil || k.Reveal() != "brave-secret" {
		t.Errorf("BraveAPIKey = %q, %v", k.Reveal(), err)
	}
	f.user(t, "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:8888\"\n")
	mustLoad(t, f.opts())
}

func TestOverrideErrors(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		flags Overrides
		want  []Problem
	}{
		{"SCV_PROVIDER unknown", map[string]string{"SCV_PROVIDER": "nope"}, Overrides{},
			[]Problem{{"env SCV_PROVIDER", 0, "provider.active", `no provider profile "nope"; defined profiles: "anthropic", "local", "openai" (add a [providers.nope] table to the user config)`}}},
		{"--provider unknown", nil, Overrides{Provider: "x"},
			[]Problem{{"flag --provider", 0, "provider.active", `no provider profile "x"; defined profiles: "anthropic", "local", "openai" (add a [providers.x] table to the user config)`}}},
		{"SCV_BASE_URL invalid", map[string]string{"SCV_BASE_URL": "localhost:8080"}, Overrides{},
			[]Problem{{"env SCV_BASE_URL", 0, "providers.openai.base_url", `"localhost:8080" is not an absolute http:// or https:// URL`}}},
		{"--base-url invalid", nil, Overrides{BaseURL: "nope"},
			[]Problem{{"flag --base-url", 0, "providers.openai.base_url", `"nope" is not an absolute http:// or https:// URL`}}},
		{"SCV_API_KEY_ENV invalid", map[string]string{"SCV_API_KEY_ENV": "1X"}, Overrides{},
			[]Problem{{"env SCV_API_KEY_ENV", 0, "providers.openai.api_key_env", `"1X" is not an environment variable name`}}},
		{"--approval-policy invalid", nil, Overrides{ApprovalPolicy: "maybe"},
			[]Problem{{"flag --approval-policy", 0, "tools.approval_policy", `"maybe" is not one of "ask-on-risk", "ask-always", "deny-on-risk", "ask-unsandboxed"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.user(t, "[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n")
			opts := f.opts()
			for k, v := range tt.env {
				opts.Env[k] = v
			}
			opts.Flags = tt.flags
			_, got := problems(t, opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderSelection(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n[providers.lab]\nmodel = \"lab-model\"\n")
	opts := f.opts()
	opts.Env["SCV_PROVIDER"] = "local"
	opts.Env["SCV_MODEL"] = "env-model"
	l := mustLoad(t, opts)
	if n, p := l.Config.ActiveProvider(); n != "local" || p.Model != "env-model" || l.Origin("provider.active") != "env SCV_PROVIDER" {
		t.Errorf("SCV_PROVIDER: active %q model %q origin %q", n, p.Model, l.Origin("provider.active"))
	}
	// --provider beats SCV_PROVIDER, and SCV_MODEL follows the profile that
	// is finally active.
	opts.Flags.Provider = "lab"
	l = mustLoad(t, opts)
	if n, p := l.Config.ActiveProvider(); n != "lab" || p.Model != "env-model" || l.Origin("provider.active") != "flag --provider" {
		t.Errorf("--provider: active %q model %q origin %q", n, p.Model, l.Origin("provider.active"))
	}
	if m := l.Config.Providers["local"].Model; m != "gpt-4.1-mini" {
		t.Errorf("inactive profile changed: model %q", m)
	}
	// Empty variables are not overrides.
	opts = f.opts()
	opts.Env["SCV_MODEL"] = ""
	if l := mustLoad(t, opts); l.Origin("providers.openai.model") != "default" {
		t.Errorf("empty SCV_MODEL applied: %q", l.Origin("providers.openai.model"))
	}
}

func TestErrorMessageFormat(t *testing.T) {
	f := newFixture(t)
	path := f.user(t, "[tools]\napproval_policy = \"x\"\n")
	_, err := Load(f.opts())
	want := "invalid configuration: " + path + `:2: tools.approval_policy: "x" is not one of "ask-on-risk", "ask-always", "deny-on-risk", "ask-unsandboxed"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	if !strings.Contains(err.Error(), path) {
		t.Error("error does not name the file")
	}
}

// The built-in anthropic profile works with only its key set, and accepts
// hosted web search.
func TestAnthropicPreset(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[provider]\nactive = \"anthropic\"\n[web]\nsearch = \"provider\"\n[providers.anthropic]\nreasoning_effort = \"low\"\n")
	l := mustLoad(t, f.opts())
	name, p := l.Config.ActiveProvider()
	want := anthropicProvider()
	want.ReasoningEffort = "low"
	if diff := cmp.Diff(want, p); name != "anthropic" || diff != "" {
		t.Errorf("active profile %q (-want +got):\n%s", name, diff)
	}
	if k, err := l.Config.APIKey(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-x"}); err != nil || k.Reveal() != "sk-ant-x" {
		t.Errorf("APIKey = %q, %v", k.Reveal(), err)
	}
	if _, err := l.Config.APIKey(map[string]string{"OPENAI_API_KEY": "sk-x"}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("APIKey without ANTHROPIC_API_KEY: %v", err)
	}
}

// TestDeprecatedPolicyNames: the first names of the approval policies are
// still accepted in every layer, become the new names (so nothing after
// loading sees an old one), and are reported where they were written.
func TestDeprecatedPolicyNames(t *testing.T) {
	f := newFixture(t)
	user := f.user(t, "[tools]\napproval_policy = \"always\"\n")
	project := f.project(t, "\n[tools]\napproval_policy = \"never\"\n")
	l := mustLoad(t, f.opts())
	if got := l.Config.Tools.ApprovalPolicy; got != PolicyDenyOnRisk {
		t.Errorf("approval_policy = %q, want %q", got, PolicyDenyOnRisk)
	}
	want := []Problem{
		{user, 2, "tools.approval_policy", `"always" is the deprecated name of "ask-always" (same meaning); write "ask-always"`},
		{project, 3, "tools.approval_policy", `"never" is the deprecated name of "deny-on-risk" (same meaning); write "deny-on-risk"`},
	}
	if d := cmp.Diff(want, l.Deprecated); d != "" {
		t.Errorf("deprecations (-want +got):\n%s", d)
	}

	opts := f.opts()
	opts.Workspace = ""
	opts.Flags.ApprovalPolicy = "on-risk"
	l = mustLoad(t, opts)
	if got := l.Config.Tools.ApprovalPolicy; got != PolicyAskOnRisk {
		t.Errorf("--approval-policy on-risk gave %q", got)
	}
	want = []Problem{want[0], {"flag --approval-policy", 0, "tools.approval_policy", `"on-risk" is the deprecated name of "ask-on-risk" (same meaning); write "ask-on-risk"`}}
	if d := cmp.Diff(want, l.Deprecated); d != "" {
		t.Errorf("deprecations with the flag (-want +got):\n%s", d)
	}

	f.user(t, "[tools]\napproval_policy = \"ask-always\"\n")
	if l := mustLoad(t, Options{Home: f.home, Env: map[string]string{}}); len(l.Deprecated) != 0 {
		t.Errorf("the new names are reported as deprecated: %v", l.Deprecated)
	}
}
