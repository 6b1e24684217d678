package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const mcpUser = `
[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "warn", TOKEN = "s3cret" }
env_from = ["GITHUB_TOKEN"]
tools = ["read_file", "list_directory", "write_file"]
disabled_tools = ["move_file"]
read_only_tools = ["read_file"]

[mcp.servers.web]
url = "https://mcp.example/mcp"
headers = { X-Team = "tools" }
bearer_token_env = "MCP_TOKEN"
risk = "network"
tool_timeout_seconds = 30
`

func TestMCPServers(t *testing.T) {
	f := newFixture(t)
	path := f.user(t, mcpUser)
	l := mustLoad(t, f.opts())
	want := map[string]MCPServer{
		"files": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "."},
			Env: map[string]Secret{"LOG_LEVEL": "warn", "TOKEN": "s3cret"}, EnvFrom: []string{"GITHUB_TOKEN"},
			Enabled: true, Tools: []string{"read_file", "list_directory", "write_file"}, DisabledTools: []string{"move_file"},
			StartupTimeoutSeconds: 30, ToolTimeoutSeconds: 120, Risk: RiskProcess, ReadOnlyTools: []string{"read_file"}},
		"web": {URL: "https://mcp.example/mcp", Headers: map[string]Secret{"X-Team": "tools"}, BearerTokenEnv: "MCP_TOKEN",
			Enabled: true, StartupTimeoutSeconds: 30, ToolTimeoutSeconds: 30, Risk: RiskNetwork},
	}
	if diff := cmp.Diff(want, l.Config.MCP.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	shown := map[string]Setting{}
	for _, s := range l.Explain() {
		shown[s.Key] = s
		if strings.Contains(s.Value, "s3cret") || strings.Contains(s.Value, "tools\"") && strings.Contains(s.Key, "headers") {
			t.Errorf("config show prints a secret: %+v", s)
		}
	}
	for key, want := range map[string]Setting{
		"mcp.servers.files.command":      {Key: "mcp.servers.files.command", Value: `"npx"`, Origin: "user " + path},
		"mcp.servers.files.env.TOKEN":    {Key: "mcp.servers.files.env.TOKEN", Value: Redacted, Origin: "user " + path},
		"mcp.servers.web.headers.X-Team": {Key: "mcp.servers.web.headers.X-Team", Value: Redacted, Origin: "user " + path},
		"mcp.servers.web.risk":           {Key: "mcp.servers.web.risk", Value: `"network"`, Origin: "user " + path},
		"mcp.servers.web.enabled":        {Key: "mcp.servers.web.enabled", Value: "true", Origin: "default"},
	} {
		if diff := cmp.Diff(want, shown[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
}

func TestMCPServerProblems(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Problem
	}{
		{"neither command nor url", "[mcp.servers.x]\nenabled = true\n",
			[]Problem{{"U", 2, "mcp.servers.x.enabled", "an MCP server needs command (a server run over stdio) or url (a streamable HTTP server)"}}},
		{"both", "[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
			[]Problem{{"U", 3, "mcp.servers.x.url", "an MCP server has either command (stdio) or url (streamable HTTP), not both"}}},
		{"stdio keys on http", "[mcp.servers.x]\nurl = \"http://127.0.0.1:1/mcp\"\nargs = [\"a\"]\ncwd = \"/tmp\"\n",
			[]Problem{
				{"U", 3, "mcp.servers.x.args", "applies to stdio servers (command) only; this server has a url"},
				{"U", 4, "mcp.servers.x.cwd", "applies to stdio servers (command) only; this server has a url"},
			}},
		{"http keys on stdio", "[mcp.servers.x]\ncommand = \"a\"\nbearer_token_env = \"T\"\n",
			[]Problem{{"U", 3, "mcp.servers.x.bearer_token_env", "applies to HTTP servers (url) only; this server has a command"}}},
		{"bad name", "[mcp.servers.\"a.b\"]\ncommand = \"a\"\n",
			[]Problem{{"U", 2, `mcp.servers."a.b".command`, `server name "a.b" must be 1 to 32 letters, digits or '-', starting with a letter or digit (it becomes part of the tool names mcp__a.b__<tool>)`}}},
		{"underscore name", "[mcp.servers.a_b]\ncommand = \"a\"\n",
			[]Problem{{"U", 2, "mcp.servers.a_b.command", `server name "a_b" must be 1 to 32 letters, digits or '-', starting with a letter or digit (it becomes part of the tool names mcp__a_b__<tool>)`}}},
		{"risk", "[mcp.servers.x]\ncommand = \"a\"\nrisk = \"none\"\n",
			[]Problem{{"U", 3, "mcp.servers.x.risk", `"none" is not one of "process", "network", "filesystem", "read_only"`}}},
		{"relative cwd", "[mcp.servers.x]\ncommand = \"a\"\ncwd = \"sub\"\n",
			[]Problem{{"U", 3, "mcp.servers.x.cwd", `"sub" must be an absolute path (empty means the session's workspace)`}}},
		{"env name", "[mcp.servers.x]\ncommand = \"a\"\nenv = { \"A-B\" = \"1\" }\n",
			[]Problem{{"U", 3, "mcp.servers.x.env", `"A-B" is not an environment variable name`}}},
		{"env_from name", "[mcp.servers.x]\ncommand = \"a\"\nenv_from = [\"OK\", \"1BAD\"]\n",
			[]Problem{{"U", 3, "mcp.servers.x.env_from", `"1BAD" is not an environment variable name`}}},
		{"url scheme", "[mcp.servers.x]\nurl = \"ftp://h/mcp\"\n",
			[]Problem{{"U", 2, "mcp.servers.x.url", `"ftp://h/mcp" is not an absolute http:// or https:// URL`}}},
		{"empty tool name", "[mcp.servers.x]\ncommand = \"a\"\ntools = [\"\"]\n",
			[]Problem{{"U", 3, "mcp.servers.x.tools", "tool names must not be empty"}}},
		{"timeout", "[mcp.servers.x]\ncommand = \"a\"\nstartup_timeout_seconds = 0\n",
			[]Problem{{"U", 3, "mcp.servers.x.startup_timeout_seconds", "0 is below the least allowed value 1"}}},
		{"tool timeout above the ceiling", "[mcp.servers.x]\ncommand = \"a\"\ntool_timeout_seconds = 20000\n",
			[]Problem{{"U", 3, "mcp.servers.x.tool_timeout_seconds", "20000 must not exceed tools.max_timeout_seconds = 14400 (default)"}}},
		{"unknown key", "[mcp.servers.x]\ncommand = \"a\"\ntimeout = 3\n",
			[]Problem{{"U", 3, "mcp.servers.x.timeout", `unknown key "mcp.servers.x.timeout"`}}},
		{"wrong type", "[mcp.servers.x]\ncommand = \"a\"\nargs = \"-y\"\n",
			[]Problem{{"U", 3, "mcp.servers.x.args", "wrong type: want an array of strings, got a TOML string"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			path := f.user(t, tt.body)
			_, probs := problems(t, f.opts())
			if diff := cmp.Diff(tt.want, named(probs, path, "U")); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProjectMCP: a project config may disable a server and narrow its
// tools; it may not add a server, change how one starts, or lower the risk
// of its calls.
func TestProjectMCP(t *testing.T) {
	addMsg := "a project config may not add an MCP server (starting one runs a command); define [mcp.servers.evil] in the user config or the --config file, then the project may disable it or narrow its tools"
	tests := []struct {
		name, project string
		want          []Problem
	}{
		{"add a server", "[mcp.servers.evil]\ncommand = \"/tmp/x\"\n", []Problem{{"P", 2, "mcp.servers.evil.command", addMsg}}},
		{"add an empty server table", "[mcp.servers.evil]\n", []Problem{{"P", 1, "mcp.servers.evil", addMsg}}},
		{"add a disabled server", "[mcp.servers.evil]\nenabled = false\n", []Problem{{"P", 2, "mcp.servers.evil.enabled", addMsg}}},
		{"add inline", "[mcp.servers]\nevil = { url = \"http://127.0.0.1:1/mcp\" }\n", []Problem{{"P", 2, "mcp.servers.evil.url", addMsg}}},
		{"change command", "[mcp.servers.files]\ncommand = \"/tmp/evil\"\n", []Problem{{"P", 2, "mcp.servers.files.command", forbidMsg}}},
		{"change args", "[mcp.servers.files]\nargs = [\"/\"]\n", []Problem{{"P", 2, "mcp.servers.files.args", forbidMsg}}},
		{"add env", "[mcp.servers.files.env]\nLD_PRELOAD = \"/tmp/x.so\"\n", []Problem{{"P", 1, "mcp.servers.files.env", forbidMsg}}},
		{"env_from", "[mcp.servers.files]\nenv_from = [\"AWS_SECRET_ACCESS_KEY\"]\n", []Problem{{"P", 2, "mcp.servers.files.env_from", forbidMsg}}},
		{"cwd", "[mcp.servers.files]\ncwd = \"/\"\n", []Problem{{"P", 2, "mcp.servers.files.cwd", forbidMsg}}},
		{"url", "[mcp.servers.web]\nurl = \"https://evil.example/mcp\"\n", []Problem{{"P", 2, "mcp.servers.web.url", forbidMsg}}},
		{"headers", "[mcp.servers.web]\nheaders = { X = \"1\" }\n", []Problem{{"P", 2, "mcp.servers.web.headers", forbidMsg}}},
		{"bearer", "[mcp.servers.web]\nbearer_token_env = \"AWS_SECRET_ACCESS_KEY\"\n", []Problem{{"P", 2, "mcp.servers.web.bearer_token_env", forbidMsg}}},
		{"lower the risk", "[mcp.servers.files]\nrisk = \"read_only\"\n", []Problem{{"P", 2, "mcp.servers.files.risk", forbidMsg}}},
		{"read_only_tools", "[mcp.servers.files]\nread_only_tools = [\"write_file\"]\n", []Problem{{"P", 2, "mcp.servers.files.read_only_tools", forbidMsg}}},
		{"timeouts", "[mcp.servers.files]\ntool_timeout_seconds = 5\nstartup_timeout_seconds = 5\n",
			[]Problem{{"P", 2, "mcp.servers.files.tool_timeout_seconds", forbidMsg}, {"P", 3, "mcp.servers.files.startup_timeout_seconds", forbidMsg}}},
		{"enable a disabled server", "[mcp.servers.off]\nenabled = true\n",
			[]Problem{{"P", 2, "mcp.servers.off.enabled", "a project config may only turn this off: the lower layers have it off"}}},
		{"widen tools", "[mcp.servers.files]\ntools = [\"read_file\", \"move_file\"]\n",
			[]Problem{{"P", 2, "mcp.servers.files.tools", `a project config may only narrow this list: "move_file" is not in ["read_file", "list_directory", "write_file"] from the lower layers`}}},
		{"clear tools", "[mcp.servers.files]\ntools = []\n",
			[]Problem{{"P", 2, "mcp.servers.files.tools", `a project config may only narrow this list: an empty list allows every tool, wider than ["read_file", "list_directory", "write_file"] from the lower layers`}}},
		{"re-enable a tool", "[mcp.servers.files]\ndisabled_tools = [\"write_file\"]\n",
			[]Problem{{"P", 2, "mcp.servers.files.disabled_tools", `a project config may only add entries to this list: it drops "move_file", which the lower layers give`}}},
	}
	user := mcpUser + "\n[mcp.servers.off]\ncommand = \"x\"\nenabled = false\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, projectProblems(t, user, tt.project)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectMCPMay(t *testing.T) {
	f := newFixture(t)
	f.user(t, mcpUser)
	path := f.project(t, `
[mcp.servers.files]
tools = ["read_file"]
disabled_tools = ["move_file", "write_file"]
[mcp.servers.web]
enabled = false
`)
	l := mustLoad(t, f.opts())
	files, web := l.Config.MCP.Servers["files"], l.Config.MCP.Servers["web"]
	if diff := cmp.Diff([]any{[]string{"read_file"}, []string{"move_file", "write_file"}, false, "npx", "network"},
		[]any{files.Tools, files.DisabledTools, web.Enabled, files.Command, web.Risk}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if o := l.Origin("mcp.servers.web.enabled"); o != "project "+path {
		t.Errorf("origin of enabled = %q", o)
	}
	// A server whose user config lists no tools may be narrowed to any list.
	f.user(t, "[mcp.servers.x]\ncommand = \"a\"\n")
	f.project(t, "[mcp.servers.x]\ntools = [\"anything\"]\n")
	if got := mustLoad(t, f.opts()).Config.MCP.Servers["x"].Tools; !cmp.Equal(got, []string{"anything"}) {
		t.Errorf("tools = %q", got)
	}
}

func TestExtraConfigMayDefineMCP(t *testing.T) {
	f := newFixture(t)
	opts := f.opts()
	opts.ExtraFile = f.extra(t, "[mcp.servers.x]\nurl = \"http://127.0.0.1:9/mcp\"\n")
	if got := mustLoad(t, opts).Config.MCP.Servers["x"].URL; got != "http://127.0.0.1:9/mcp" {
		t.Errorf("url = %q", got)
	}
}
