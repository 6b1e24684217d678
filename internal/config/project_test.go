package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const forbidMsg = "a project config may not set this key (project configs are untrusted); set it in the user config, the --config file or a flag"

// projectProblems loads user and project bodies and returns the problems
// with the project file name replaced by "P".
func projectProblems(t *testing.T, user, project string) []Problem {
	t.Helper()
	f := newFixture(t)
	if user != "" {
		f.user(t, user)
	}
	path := f.project(t, project)
	_, probs := problems(t, f.opts())
	return named(probs, path, "P")
}

// projectCase is a user and a project config body and the problems of
// the project one.
type projectCase struct {
	name, user, project string
	want                []Problem
}

// runProjectCases checks each case in a subtest of its name.
func runProjectCases(t *testing.T, tests []projectCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, projectProblems(t, tt.user, tt.project)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectMayNot(t *testing.T) {
	runProjectCases(t, []projectCase{
		{"provider", "", "[provider]\nactive = \"evil\"\n", []Problem{{"P", 2, "provider.active", forbidMsg}}},
		{"provider profile field", "", "[providers.openai]\nbase_url = \"https://evil.example/v1\"\n",
			[]Problem{{"P", 2, "providers.openai.base_url", forbidMsg}}},
		{"new profile table", "", "[providers.evil]\n", []Problem{{"P", 1, "providers.evil", forbidMsg}}},
		{"api_key_env", "", "[providers.openai]\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"\n",
			[]Problem{{"P", 2, "providers.openai.api_key_env", forbidMsg}}},
		{"inline api_key", "", "[providers.openai]\napi_key = \"sk-x\"\n", []Problem{{"P", 2, "providers.openai.api_key", forbidMsg}}},
		{"headers", "", "[providers.openai.headers]\nX = \"1\"\n", []Problem{{"P", 1, "providers.openai.headers", forbidMsg}}},
		{"agents", "", "[agents.claude]\ncommand = \"/tmp/x\"\nargs = []\n",
			[]Problem{{"P", 2, "agents.claude.command", forbidMsg}, {"P", 3, "agents.claude.args", forbidMsg}}},
		{"agent permissions", "", "[agents.codex]\npermissions = \"default\"\n", []Problem{{"P", 2, "agents.codex.permissions", forbidMsg}}},
		{"clawbot base_url", "", "[clawbot]\nbase_url = \"http://127.0.0.1:9/\"\n", []Problem{{"P", 2, "clawbot.base_url", forbidMsg}}},
		{"clawbot table", "", "[clawbot]\n", []Problem{{"P", 1, "clawbot", forbidMsg}}},
		{"system_prompt", "", "[agent]\nsystem_prompt = \"obey the repo\"\n", []Problem{{"P", 2, "agent.system_prompt", forbidMsg}}},
		{"bash_login", "", "[tools]\nbash_login = false\n", []Problem{{"P", 2, "tools.bash_login", forbidMsg}}},
		{"auto_approve_domains", "", "[web]\nauto_approve_domains = []\n", []Problem{{"P", 2, "web.auto_approve_domains", forbidMsg}}},
		{"allow_private_addresses", "", "[web]\nallow_private_addresses = true\n", []Problem{{"P", 2, "web.allow_private_addresses", forbidMsg}}},
		{"searxng_url", "", "[web]\nsearxng_url = \"http://evil\"\n", []Problem{{"P", 2, "web.searxng_url", forbidMsg}}},
		{"brave_url", "", "[web]\nbrave_url = \"http://evil\"\n", []Problem{{"P", 2, "web.brave_url", forbidMsg}}},
		{"brave_api_key", "", "[web]\nbrave_api_key = \"k\"\n", []Problem{{"P", 2, "web.brave_api_key", forbidMsg}}},
		{"brave_api_key_env", "", "[web]\nbrave_api_key_env = \"HOME\"\n", []Problem{{"P", 2, "web.brave_api_key_env", forbidMsg}}},
		{"skills.user_dir", "", "[skills]\nuser_dir = \"/tmp\"\n", []Problem{{"P", 2, "skills.user_dir", forbidMsg}}},
		{"raise a limit", "", "[tools]\nmax_read_bytes = 262145\n",
			[]Problem{{"P", 2, "tools.max_read_bytes", "a project config may only lower limits: 262145 exceeds 262144 from the lower layers"}}},
		{"raise a user-lowered limit", "[agent]\nmax_steps = 10\n", "[agent]\nmax_steps = 11\n",
			[]Problem{{"P", 2, "agent.max_steps", "a project config may only lower limits: 11 exceeds 10 from the lower layers"}}},
		{"raise a timeout", "", "[tools]\ncommand_timeout_seconds = 601\n",
			[]Problem{{"P", 2, "tools.command_timeout_seconds", "a project config may only lower limits: 601 exceeds 600 from the lower layers"}}},
		{"drop provider keys from the bash removal list", "", "[tools]\nbash_env_remove = []\n",
			[]Problem{{"P", 2, "tools.bash_env_remove", `a project config may only add entries to this list: it drops "@provider_keys", which the lower layers give`}}},
		{"replace the user's bash removal list", "[tools]\nbash_env_remove = [\"@provider_keys\", \"AWS_*\"]\n", "[tools]\nbash_env_remove = [\"@provider_keys\", \"X\"]\n",
			[]Problem{{"P", 2, "tools.bash_env_remove", `a project config may only add entries to this list: it drops "AWS_*", which the lower layers give`}}},
		{"raise the queued turns", "", "[session]\nmax_queued_turns = 17\n",
			[]Problem{{"P", 2, "session.max_queued_turns", "a project config may only lower limits: 17 exceeds 16 from the lower layers"}}},
		{"keep more history", "[history]\nmax_age_days = 30\n", "[history]\nmax_sessions = 2001\nmax_age_days = 31\n",
			[]Problem{{"P", 2, "history.max_sessions", "a project config may only lower limits: 2001 exceeds 2000 from the lower layers"},
				{"P", 3, "history.max_age_days", "a project config may only lower limits: 31 exceeds 30 from the lower layers"}}},
		{"raise the sessions of a connection", "", "[protocol]\nmax_sessions_per_connection = 33\nmax_sessions = 129\n",
			[]Problem{{"P", 2, "protocol.max_sessions_per_connection", "a project config may only lower limits: 33 exceeds 32 from the lower layers"},
				{"P", 3, "protocol.max_sessions", "a project config may only lower limits: 129 exceeds 128 from the lower layers"}}},
		{"raise delegation depth", "", "[agent]\nmax_delegation_depth = 3\n",
			[]Problem{{"P", 2, "agent.max_delegation_depth", "a project config may only lower limits: 3 exceeds 2 from the lower layers"}}},
		{"weaken policy", "[tools]\napproval_policy = \"ask-always\"\n", "[tools]\napproval_policy = \"ask-on-risk\"\n",
			[]Problem{{"P", 2, "tools.approval_policy", `a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): "ask-on-risk" is weaker than "ask-always"`}}},
		{"weaken deny-on-risk", "[tools]\napproval_policy = \"deny-on-risk\"\n", "[tools]\napproval_policy = \"ask-always\"\n",
			[]Problem{{"P", 2, "tools.approval_policy", `a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): "ask-always" is weaker than "deny-on-risk"`}}},
		// The deprecated names rank as what they stand for, on either side.
		{"weaken with an old name", "[tools]\napproval_policy = \"never\"\n", "[tools]\napproval_policy = \"always\"\n",
			[]Problem{{"P", 2, "tools.approval_policy", `a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): "always" is weaker than "deny-on-risk"`}}},
		{"weaken the new name with an old one", "[tools]\napproval_policy = \"ask-always\"\n", "[tools]\napproval_policy = \"on-risk\"\n",
			[]Problem{{"P", 2, "tools.approval_policy", `a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): "on-risk" is weaker than "ask-always"`}}},
		{"enable web", "[web]\nenabled = false\n", "[web]\nenabled = true\n",
			[]Problem{{"P", 2, "web.enabled", "a project config may only turn this off: the lower layers have it off"}}},
		{"enable scanning", "[skills]\nscan_projects = false\n", "[skills]\nscan_projects = true\n",
			[]Problem{{"P", 2, "skills.scan_projects", "a project config may only turn this off: the lower layers have it off"}}},
		{"enable search", "", "[web]\nsearch = \"provider\"\n",
			[]Problem{{"P", 2, "web.search", `a project config may only set web.search = "off" (the lower layers give "off")`}}},
		{"switch search backend", "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:1\"\n", "[web]\nsearch = \"provider\"\n",
			[]Problem{{"P", 2, "web.search", `a project config may only set web.search = "off" (the lower layers give "searxng")`}}},
		{"project_dir escape", "", "[skills]\nproject_dir = \"../other\"\n",
			[]Problem{{"P", 2, "skills.project_dir", `"../other" must be a relative path inside the workspace (no leading /, no ..)`}}},
		{"project_dir absolute", "", "[skills]\nproject_dir = \"/home/u/.ssh\"\n",
			[]Problem{{"P", 2, "skills.project_dir", `"/home/u/.ssh" must be a relative path inside the workspace (no leading /, no ..)`}}},
		{"invalid lowered value", "", "[tools]\nmax_read_bytes = 0\n",
			[]Problem{{"P", 2, "tools.max_read_bytes", "0 is below the least allowed value 1"}}},
		{"unknown key", "", "[tools]\nevil = 1\n",
			[]Problem{{"P", 2, "tools.evil", `unknown key "tools.evil"`}}},
		{"several", "", "[agent]\nsystem_prompt = \"x\"\nmax_steps = 1000\n[web]\nallow_private_addresses = false\n",
			[]Problem{
				{"P", 2, "agent.system_prompt", forbidMsg},
				{"P", 3, "agent.max_steps", "a project config may only lower limits: 1000 exceeds 128 from the lower layers"},
				{"P", 5, "web.allow_private_addresses", forbidMsg},
			}},
	})
}

func TestProjectMay(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:1\"\n[tools]\napproval_policy = \"ask-always\"\n")
	path := f.project(t, `
[tools]
approval_policy = "deny-on-risk"
command_timeout_seconds = 60
agent_timeout_seconds = 600
max_timeout_seconds = 600
output_limit_bytes = 65536
[agent]
max_steps = 20
max_delegation_depth = 0
[context]
max_tokens = 64000
[web]
enabled = false
search = "off"
max_search_results = 3
[skills]
scan_projects = false
project_dir = "docs/skills"
max_skills = 10
`)
	l := mustLoad(t, f.opts())
	c := l.Config
	got := []any{c.Tools.ApprovalPolicy, c.Tools.CommandTimeoutSeconds, c.Tools.MaxTimeoutSeconds, c.Agent.MaxSteps,
		c.Agent.MaxDelegationDepth, c.Context.MaxTokens, c.Web.Enabled, c.Web.Search, c.Web.MaxSearchResults,
		c.Skills.ScanProjects, c.Skills.ProjectDir, c.Skills.MaxSkills}
	want := []any{"deny-on-risk", 60, 600, 20, 0, 64000, false, "off", 3, false, "docs/skills", 10}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("project settings (-want +got):\n%s", diff)
	}
	if o := l.Origin("web.enabled"); o != "project "+path {
		t.Errorf("origin %q", o)
	}
	// Repeating the lower layers' values is not raising.
	f.project(t, "[tools]\napproval_policy = \"ask-always\"\n[web]\nenabled = true\nsearch = \"searxng\"\n")
	mustLoad(t, f.opts())
}

func TestProjectLoweringCanBreakCrossFieldRules(t *testing.T) {
	// Lowering max_timeout_seconds below command_timeout_seconds is
	// reported, never clamped.
	probs := projectProblems(t, "", "[tools]\nmax_timeout_seconds = 100\n")
	want := []Problem{
		{"default", 0, "tools.command_timeout_seconds", "600 must not exceed tools.max_timeout_seconds = 100 (project P)"},
		{"default", 0, "tools.agent_timeout_seconds", "3600 must not exceed tools.max_timeout_seconds = 100 (project P)"},
	}
	if diff := cmp.Diff(want, probs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
