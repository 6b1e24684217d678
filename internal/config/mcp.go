package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// MCP is the [mcp] table.
type MCP struct {
	Servers map[string]MCPServer `toml:"servers"`
}

// MCPServer is one [mcp.servers.<name>] table: a stdio server (Command) or a
// streamable HTTP server (URL). Starting one runs a command or sends
// credentials, so only the user config and the --config file may define or
// change one; a project config may only disable it or narrow its tools.
type MCPServer struct {
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
	// Env values are set in the server's environment; EnvFrom names
	// variables copied from SCV's own environment.
	Env     map[string]Secret `toml:"env"`
	EnvFrom []string          `toml:"env_from"`
	// Cwd is absolute; empty means the session's workspace.
	Cwd string `toml:"cwd"`

	URL            string            `toml:"url"`
	Headers        map[string]Secret `toml:"headers"`
	BearerTokenEnv string            `toml:"bearer_token_env"`

	Enabled               bool     `toml:"enabled"`
	Tools                 []string `toml:"tools"`
	DisabledTools         []string `toml:"disabled_tools"`
	StartupTimeoutSeconds int      `toml:"startup_timeout_seconds"`
	ToolTimeoutSeconds    int      `toml:"tool_timeout_seconds"`
	Risk                  string   `toml:"risk"`
	ReadOnlyTools         []string `toml:"read_only_tools"`
}

// Risks an MCP server's tools may be given (the tool risk classes that do
// not belong to SCV's own delegation).
const (
	RiskReadOnly   = "read_only"
	RiskFilesystem = "filesystem"
	RiskNetwork    = "network"
	RiskProcess    = "process"
)

var mcpServerType = reflect.TypeFor[MCPServer]()

func defaultMCPServer() MCPServer {
	return MCPServer{Enabled: true, StartupTimeoutSeconds: 30, ToolTimeoutSeconds: 120, Risk: RiskProcess}
}

// validMCPName says name is what a server name may look like,
// [A-Za-z0-9][A-Za-z0-9-]{0,31}: it becomes part of tool names
// (mcp__<server>__<tool>), which model APIs limit to 64 characters of
// [A-Za-z0-9_-].
func validMCPName(name string) bool { return ValidMCPName(name) }

// ValidMCPName is validMCPName for the servers a client adds to a session.
func ValidMCPName(name string) bool {
	if name == "" || len(name) > 32 || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func absPathOrEmpty(s string) string {
	if s != "" && !filepath.IsAbs(s) {
		return fmt.Sprintf("%q must be an absolute path (empty means the session's workspace)", s)
	}
	return ""
}

func toolName(s string) string {
	if strings.TrimSpace(s) == "" {
		return "tool names must not be empty"
	}
	return ""
}

func checkEnv(env map[string]Secret) string {
	for name, v := range env {
		if msg := envName(name); msg != "" || name == "" {
			return fmt.Sprintf("%q is not an environment variable name", name)
		}
		if strings.ContainsRune(v.Reveal(), 0) {
			return fmt.Sprintf("the value of %s contains NUL", name)
		}
	}
	return ""
}

// mcpRefusal says why a project config may not touch this entry of
// [mcp.servers.<name>]; "" leaves the decision to the key's rule.
func mcpRefusal(path []string, root reflect.Value) string {
	if len(path) < 3 || path[0] != "mcp" {
		return ""
	}
	if !get(root, path[:3]).IsValid() {
		return fmt.Sprintf("a project config may not add an MCP server (starting one runs a command); define [mcp.servers.%s] in the user config or the --config file, then the project may disable it or narrow its tools",
			joinKey(path[2:3]))
	}
	return ""
}

// narrowList checks a project's tools list against the lower layers': empty
// allows every tool, so it may only become a non-empty subset.
func narrowList(ov, nv reflect.Value) string {
	o, n := ov.Interface().([]string), nv.Interface().([]string)
	if len(n) == 0 {
		if len(o) > 0 {
			return fmt.Sprintf("a project config may only narrow this list: an empty list allows every tool, wider than %s from the lower layers", formatValue(ov))
		}
		return ""
	}
	for _, x := range n {
		if len(o) > 0 && !slices.Contains(o, x) {
			return fmt.Sprintf("a project config may only narrow this list: %q is not in %s from the lower layers", x, formatValue(ov))
		}
	}
	return ""
}

// growList checks a list a project may only add to (disabled_tools,
// bash_env_remove).
func growList(ov, nv reflect.Value) string {
	o, n := ov.Interface().([]string), nv.Interface().([]string)
	for _, x := range o {
		if !slices.Contains(n, x) {
			return fmt.Sprintf("a project config may only add entries to this list: it drops %q, which the lower layers give", x)
		}
	}
	return ""
}

// mcpProblems checks the rules that relate the keys of each server.
func (l *Loaded) mcpProblems(fail func(key, msg string)) {
	names := make([]string, 0, len(l.Config.MCP.Servers))
	for n := range l.Config.MCP.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		s := l.Config.MCP.Servers[name]
		key := func(k string) string { return joinKey([]string{"mcp", "servers", name, k}) }
		first := key("command")
		if s.Command == "" {
			first = key("url")
		}
		if _, ok := l.origins[first]; !ok {
			first = l.firstKeyOf(joinKey([]string{"mcp", "servers", name}))
		}
		if !validMCPName(name) {
			fail(first, fmt.Sprintf("server name %q must be 1 to 32 letters, digits or '-', starting with a letter or digit (it becomes part of the tool names mcp__%s__<tool>)", name, name))
		}
		switch {
		case s.Command == "" && s.URL == "":
			fail(first, "an MCP server needs command (a server run over stdio) or url (a streamable HTTP server)")
			continue
		case s.Command != "" && s.URL != "":
			fail(key("url"), "an MCP server has either command (stdio) or url (streamable HTTP), not both")
			continue
		}
		stdioOnly := map[string]bool{"args": len(s.Args) > 0, "env": len(s.Env) > 0, "env_from": len(s.EnvFrom) > 0, "cwd": s.Cwd != ""}
		httpOnly := map[string]bool{"headers": len(s.Headers) > 0, "bearer_token_env": s.BearerTokenEnv != ""}
		for _, k := range []string{"args", "env", "env_from", "cwd"} {
			if s.URL != "" && stdioOnly[k] {
				fail(key(k), "applies to stdio servers (command) only; this server has a url")
			}
		}
		for _, k := range []string{"headers", "bearer_token_env"} {
			if s.Command != "" && httpOnly[k] {
				fail(key(k), "applies to HTTP servers (url) only; this server has a command")
			}
		}
		if s.ToolTimeoutSeconds > l.Config.Tools.MaxTimeoutSeconds {
			fail(key("tool_timeout_seconds"), fmt.Sprintf("%d must not exceed tools.max_timeout_seconds = %d (%s)",
				s.ToolTimeoutSeconds, l.Config.Tools.MaxTimeoutSeconds, l.Origin("tools.max_timeout_seconds")))
		}
	}
}

// firstKeyOf is the first key with an origin below prefix (by file line),
// so a problem of a whole table points at where it is written.
func (l *Loaded) firstKeyOf(prefix string) string {
	best, bestLine := prefix, 0
	for k, o := range l.origins {
		if strings.HasPrefix(k, prefix+".") && (bestLine == 0 || o.line < bestLine) {
			best, bestLine = k, o.line
		}
	}
	return best
}

// mcpTemplate explains the [mcp.servers.<name>] tables in the template.
func mcpTemplate(b *strings.Builder) {
	b.WriteString("\n## MCP servers: one [mcp.servers.<name>] table each; their tools become mcp__<name>__<tool>.\n")
	b.WriteString("## Only this file and the --config file may define one; a project config may only\n")
	b.WriteString("## disable it (enabled = false) or narrow its tools (tools, disabled_tools). See docs/mcp.md.\n")
	b.WriteString("## For example, a table [mcp.servers.files] with these keys:\n")
	for _, k := range mcpKeyOrder {
		s := specs["mcp.servers.*."+k]
		fmt.Fprintf(b, "## %s  -- %s\n", s.example, s.doc)
	}
}

var mcpKeyOrder = []string{"command", "args", "env", "env_from", "cwd", "url", "headers", "bearer_token_env", "enabled",
	"tools", "disabled_tools", "startup_timeout_seconds", "tool_timeout_seconds", "risk", "read_only_tools"}
