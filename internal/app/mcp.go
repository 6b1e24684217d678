package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// mcpBaseEnv are the variables of SCV's environment every stdio MCP server
// gets; anything else (tokens included) only through env_from or env.
var mcpBaseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ",
	delegation.EnvDepth, delegation.EnvParent}

// MCPServers resolves the enabled [mcp.servers] of cfg for a session in
// workspace, sorted by name. A server whose command or variables cannot be
// resolved carries a Problem instead of failing the session.
func (a *App) MCPServers(cfg *config.Config, workspace string) []mcp.Server {
	var out []mcp.Server
	for _, name := range sortedKeys(cfg.MCP.Servers) {
		if s := cfg.MCP.Servers[name]; s.Enabled {
			out = append(out, a.MCPServer(cfg, name, workspace))
		}
	}
	return out
}

// MCPServer resolves one configured server (enabled or not).
func (a *App) MCPServer(cfg *config.Config, name, workspace string) mcp.Server {
	c := cfg.MCP.Servers[name]
	s := mcp.Server{Name: name, URL: c.URL,
		StartupTimeout: time.Duration(c.StartupTimeoutSeconds) * time.Second, ToolTimeout: time.Duration(c.ToolTimeoutSeconds) * time.Second,
		Tools: slices.Clone(c.Tools), DisabledTools: slices.Clone(c.DisabledTools), Risk: tool.Risk(c.Risk), ReadOnlyTools: slices.Clone(c.ReadOnlyTools)}
	var problems []string
	if c.URL != "" {
		s.Headers = map[string]string{}
		for k, v := range c.Headers {
			s.Headers[k] = v.Reveal()
		}
		if c.BearerTokenEnv != "" {
			if tok := a.opts.Env[c.BearerTokenEnv]; tok != "" {
				s.Headers["Authorization"] = "Bearer " + tok
			} else {
				problems = append(problems, fmt.Sprintf("mcp.servers.%s.bearer_token_env names %s, which is not set in SCV's environment", name, c.BearerTokenEnv))
			}
		}
	} else {
		s.Dir = c.Cwd
		if s.Dir == "" {
			s.Dir = workspace
		}
		s.Args = slices.Clone(c.Args)
		env := map[string]string{}
		for _, k := range mcpBaseEnv {
			if v, ok := a.opts.Env[k]; ok {
				env[k] = v
			}
		}
		for _, k := range c.EnvFrom {
			if v, ok := a.opts.Env[k]; ok {
				env[k] = v
			} else {
				problems = append(problems, fmt.Sprintf("mcp.servers.%s.env_from names %s, which is not set in SCV's environment", name, k))
			}
		}
		for k, v := range c.Env {
			env[k] = v.Reveal()
		}
		for k, v := range env {
			s.Env = append(s.Env, k+"="+v)
		}
		sort.Strings(s.Env)
		path, err := lookPath(c.Command, env["PATH"], s.Dir)
		if err != nil {
			problems = append(problems, err.Error())
		}
		s.Command = path
		s.Sandbox = a.Sandbox(cfg, config.SandboxMCP)
	}
	s.Problem = strings.Join(problems, "; ")
	return s
}

// maxClientMCPServers bounds the MCP servers one session.start may add.
const maxClientMCPServers = 32

// ClientMCPServers resolves the MCP servers a client adds to one session
// (session.start's mcp_servers: an editor's, through scv acp). They get
// the rules of configured servers with the defaults a client cannot
// change: every tool has risk process (none is read_only), the configured
// timeouts' defaults apply, a stdio server runs in the workspace with
// SCV's base variables and the client's, in its own process group like
// every MCP server. A name must be a valid server name not already
// configured; a bad entry is an error naming its field.
func (a *App) ClientMCPServers(cfg *config.Config, list []proto.MCPServer, workspace string) ([]mcp.Server, error) {
	if len(list) > maxClientMCPServers {
		return nil, fmt.Errorf("mcp_servers: %d servers, more than %d", len(list), maxClientMCPServers)
	}
	var out []mcp.Server
	seen := map[string]bool{}
	for i, c := range list {
		field := fmt.Sprintf("mcp_servers[%d]", i)
		if !config.ValidMCPName(c.Name) {
			return nil, fmt.Errorf("%s.name %q is not a valid MCP server name (1 to 32 letters, digits or '-', not starting with '-')", field, c.Name)
		}
		if _, ok := cfg.MCP.Servers[c.Name]; ok || seen[c.Name] {
			return nil, fmt.Errorf("%s.name %q is already the name of another MCP server of this session; rename it", field, c.Name)
		}
		seen[c.Name] = true
		if (c.Command == "") == (c.URL == "") {
			return nil, fmt.Errorf("%s (%s) needs exactly one of command (a stdio server) and url (an HTTP server)", field, c.Name)
		}
		s := mcp.Server{Name: c.Name, URL: c.URL, StartupTimeout: 30 * time.Second, ToolTimeout: 120 * time.Second, Risk: tool.Process}
		if c.URL != "" {
			if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
				return nil, fmt.Errorf("%s.url %q is not an http:// or https:// URL", field, c.URL)
			}
			s.Headers = maps.Clone(c.Headers)
			out = append(out, s)
			continue
		}
		s.Dir, s.Args = workspace, slices.Clone(c.Args)
		env := map[string]string{}
		for _, k := range mcpBaseEnv {
			if v, ok := a.opts.Env[k]; ok {
				env[k] = v
			}
		}
		maps.Copy(env, c.Env)
		for k, v := range env {
			s.Env = append(s.Env, k+"="+v)
		}
		sort.Strings(s.Env)
		path, err := lookPath(c.Command, env["PATH"], s.Dir)
		if err != nil {
			return nil, fmt.Errorf("%s.command: %v", field, err)
		}
		s.Command = path
		out = append(out, s)
	}
	return out, nil
}

// lookPath resolves a server's command the way a shell would, with the
// PATH the server gets (not this process's), relative paths from dir.
func lookPath(cmd, pathEnv, dir string) (string, error) {
	if strings.Contains(cmd, "/") {
		p := cmd
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("command %s is not an executable file", p)
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, cmd); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q is not found in PATH (%s)", cmd, pathEnv)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withMCP adds the servers' tools to a toolset: Current builds the registry
// of the moment (built-in tools, then the MCP tools), rebuilt only when the
// MCP tools changed.
func (a *App) withMCP(ts *Toolset, builtins []tool.Tool, servers []mcp.Server, workspace string) {
	lease := a.mcp.Acquire(workspace, servers)
	ts.MCP = lease
	ts.Release = lease.Release
	var mu sync.Mutex
	cur := ts.Registry
	ts.Current = func(ctx context.Context) *tool.Registry {
		mcpTools, changed := lease.Tools(ctx)
		mu.Lock()
		defer mu.Unlock()
		if !changed {
			return cur
		}
		r, err := tool.NewRegistry(append(slices.Clone(builtins), mcpTools...)...)
		if err != nil {
			// MCP names are prefixed and unique; this is a programming error.
			a.opts.Logger.Error("build the registry with MCP tools", "err", err)
			return cur
		}
		cur = r
		return cur
	}
}

// Close stops the MCP servers this app started; call it when the process
// is done serving.
func (a *App) Close() {
	a.warming.Wait()
	a.convMu.Lock()
	pool := a.acp
	a.convMu.Unlock()
	if pool != nil {
		pool.Close()
	}
	a.mcp.Close()
	a.opts.Contain.Close()
}

// ProbeMCP starts servers (each within its startup timeout, in parallel),
// lists their tools and reports on them; Close stops them afterwards. It
// serves `scv mcp list` and `scv mcp test`.
func (a *App) ProbeMCP(ctx context.Context, workspace string, servers []mcp.Server) []mcp.ServerState {
	lease := a.mcp.Acquire(workspace, servers)
	defer lease.Release()
	lease.Tools(ctx)
	return lease.States()
}
