// Package app is SCV's composition root: the one place where configuration
// meets constructors. It loads the layered config for a workspace, builds
// the tool registry of a session (file, shell, web, skill and agent tools),
// the model client and the system prompt, and hands the server a Factory.
// It owns the MCP manager whose servers the sessions share (Close stops
// them).
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/catalog"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/mcp"
	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/skill"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/tools/agents"
	"github.com/scv-agent/scv/internal/tools/bash"
	"github.com/scv-agent/scv/internal/tools/fs"
	skilltool "github.com/scv-agent/scv/internal/tools/skill"
	"github.com/scv-agent/scv/internal/tools/todo"
	"github.com/scv-agent/scv/internal/tools/web"
	"github.com/scv-agent/scv/internal/version"
)

// Options are the process-level inputs of the app.
type Options struct {
	Layout paths.Layout
	// Env is the process environment.
	Env map[string]string
	// ExtraConfig is --config (SCV_CONFIG is read from Env by config).
	ExtraConfig string
	// Flags are the CLI overrides.
	Flags  config.Overrides
	Logger *slog.Logger
	// Tracker records delegated runs; nil disables agent tools.
	Tracker *delegation.Tracker
	// InstanceID names this SCV process in SCV_PARENT tags.
	InstanceID string
	// Contain holds the processes of every tool call, MCP server and
	// delegated run (nil: process group and tag only).
	Contain *proc.Containment
	// KeyOptional builds sessions even when the provider's key is
	// missing: their model client fails every request with the message
	// naming the variable to set. For processes that open sessions
	// without running turns (scv undo).
	KeyOptional bool
	// Allow are the rules every session starts with (scv exec --allow).
	Allow []approval.Grant
	// MaxSteps, when positive, replaces agent.max_steps (scv exec
	// --max-steps).
	MaxSteps int
}

// App builds sessions and registries.
type App struct {
	opts     Options
	sessions atomic.Int64
	mcp      *mcp.Manager
	// catalog knows context windows and prices (decoded on first use,
	// or by Warm); warming is Warm's decoding, which Close waits for.
	catalog *catalog.Catalog
	warming sync.WaitGroup
	// warned are the deprecation notes logged already: each once per
	// process, however often the configuration is loaded.
	warnedMu sync.Mutex
	warned   map[string]bool
	// saved holds the rules "always (save rule)" saved while this process
	// runs: every session consults it, so a rule saved in one session
	// covers the others at once (sessions opened later also load it from
	// the file).
	saved *approval.RuleBook
	// convs are the conversation registries, one per session store.
	convMu sync.Mutex
	convs  map[*store.Store]*delegation.Registry
	// jobs are the background jobs of delegated agents (the daemon's
	// only; nil elsewhere, where background calls are refused).
	jobs *jobs.Table
	// acp holds the running ACP adapters of delegated agents.
	acp *agents.ACPPool
}

// DeprecatedMessage is the message of the record LoadConfig logs for a
// setting given by a deprecated name; its "setting" attribute is the
// whole note (file:line: key: what to write instead).
const DeprecatedMessage = "deprecated configuration value"

// New returns an App.
func New(opts Options) *App {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.InstanceID == "" {
		opts.InstanceID = fmt.Sprintf("scv-%d", os.Getpid())
	}
	m := mcp.NewManager(mcp.Options{Logger: opts.Logger, InstanceID: opts.InstanceID, Version: version.Version, Contain: opts.Contain})
	a := &App{opts: opts, mcp: m, saved: approval.NewRuleBook("s", nil), catalog: catalog.New(catalog.Options{})}
	a.saved.SetSaver(a.saveRule)
	return a
}

// saveRule writes an allow rule to the user config: the server saves it
// (it holds the rule and must apply it at once; its clients run as the
// same user) and returns where it went (file:line).
func (a *App) saveRule(g approval.Grant) (string, error) {
	r := config.ApprovalRule{Tool: g.Tool, Prefix: g.Prefix, Path: g.Path, Domain: g.Domain, Decision: config.DecisionAllow, Workspace: g.Workspace}
	saved, err := config.SaveRule(a.opts.Layout.ConfigFile(), r, config.SaveOptions{})
	if err != nil {
		return "", err
	}
	a.opts.Logger.Info("approval rule saved", "rule", approval.Describe(g), "at", saved.Where())
	return saved.Where(), nil
}

// Contain is how this process tracks its tools' processes (nil: group and
// tag only).
func (a *App) Contain() *proc.Containment { return a.opts.Contain }

// Depth is this process's own delegation depth (SCV_DELEGATION_DEPTH).
func (a *App) Depth() int { return delegation.Depth(a.opts.Env) }

// LoadConfig loads the layered configuration for workspace (empty: no
// project layer) with the given overrides on top of the CLI flags.
func (a *App) LoadConfig(workspace string, over config.Overrides) (*config.Loaded, error) {
	flags := a.opts.Flags
	if over.Model != "" {
		flags.Model = over.Model
	}
	if over.Provider != "" {
		flags.Provider = over.Provider
	}
	if over.BaseURL != "" {
		flags.BaseURL = over.BaseURL
	}
	l, err := config.Load(config.Options{Home: a.opts.Layout, Workspace: workspace, ExtraFile: a.opts.ExtraConfig, Env: a.opts.Env, Flags: flags})
	if err == nil {
		for _, d := range l.Deprecated {
			note := d.String()
			a.warnedMu.Lock()
			seen := a.warned[note]
			if a.warned == nil {
				a.warned = map[string]bool{}
			}
			a.warned[note] = true
			a.warnedMu.Unlock()
			if !seen {
				a.opts.Logger.Warn(DeprecatedMessage, "setting", note)
			}
		}
		a.noteWorkspaceHooks(l)
	}
	return l, err
}

// Toolset is the registry of one session and what the prompt needs.
type Toolset struct {
	Registry *tool.Registry
	Skills   *skill.Set
	// HostedSearch says Responses requests offer {"type":"web_search"}.
	HostedSearch bool
	// With MCP servers configured, Current returns the registry of the
	// moment (MCP servers start on its first call and their tools may
	// change), MCP is the session's lease on them and Release ends it.
	// Without, Current returns Registry and Release does nothing.
	Current func(ctx context.Context) *tool.Registry
	MCP     *mcp.Lease
	Release func()
}

// Tools builds the registry for a workspace. depth is the session's
// delegation depth; noTools gives an empty set (no tools, no hosted search,
// no skills). extra are MCP servers a client added to the session
// (ClientMCPServers), served after the configured ones.
func (a *App) Tools(cfg *config.Config, workspace string, depth int, noTools bool, extra ...mcp.Server) (Toolset, error) {
	return a.tools(cfg, workspace, depth, noTools, nil, extra...)
}

// tools is Tools with the store the session is kept in (its conversations
// with delegated agents go there; nil keeps them in memory).
func (a *App) tools(cfg *config.Config, workspace string, depth int, noTools bool, st *store.Store, extra ...mcp.Server) (Toolset, error) {
	if noTools {
		r, _ := tool.NewRegistry()
		return fixedToolset(Toolset{Registry: r}), nil
	}
	list := a.builtins(cfg)
	set, err := skill.Discover(skill.Options{Workspace: workspace, ProjectDir: cfg.Skills.ProjectDir, UserDir: cfg.Skills.UserDir,
		ScanProjects: cfg.Skills.ScanProjects, MaxSkills: cfg.Skills.MaxSkills})
	if err != nil {
		return Toolset{}, fmt.Errorf("discover skills: %w", err)
	}
	if set.Len() > 0 {
		list = append(list, skilltool.New(skilltool.Options{Set: set, MaxBytes: cfg.Skills.MaxSkillBytes}))
	}
	ts := Toolset{Skills: set}
	if cfg.Web.Enabled {
		webTools, hosted, err := a.webTools(cfg)
		if err != nil {
			return Toolset{}, err
		}
		list = append(list, webTools...)
		ts.HostedSearch = hosted
	}
	if a.opts.Tracker != nil && depth < cfg.Agent.MaxDelegationDepth {
		opts := a.agentOptions(cfg, depth)
		opts.Conversations = a.conversations(cfg, st)
		opts.Jobs = a.jobs
		opts.ACP = a.acpPool(cfg)
		list = append(list, agents.Available(opts)...)
	}
	r, err := tool.NewRegistry(list...)
	if err != nil {
		return Toolset{}, err
	}
	ts.Registry = r
	if servers := append(a.MCPServers(cfg, workspace), extra...); len(servers) > 0 {
		a.withMCP(&ts, list, servers, workspace)
		return ts, nil
	}
	return fixedToolset(ts), nil
}

// builtins are the tools every session of cfg has, whatever its
// workspace: files, bash and the todo list. Building them has no effect
// beyond the values (WarmForSession builds a set to throw away).
func (a *App) builtins(cfg *config.Config) []tool.Tool {
	t := cfg.Tools
	secs := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return []tool.Tool{
		fs.NewRead(fs.Options{MaxReadBytes: t.MaxReadBytes, MaxWriteBytes: t.MaxWriteBytes}),
		fs.NewWrite(fs.Options{MaxReadBytes: t.MaxReadBytes, MaxWriteBytes: t.MaxWriteBytes}),
		bash.New(bash.Options{DefaultTimeout: secs(t.CommandTimeoutSeconds), MaxTimeout: secs(t.MaxTimeoutSeconds),
			Env: without(a.environ(), cfg.BashEnvRemoved()), Recorder: a.recorder(), NoLogin: !cfg.Tools.BashLogin,
			Contain: a.opts.Contain, Sandbox: a.Sandbox(cfg, config.SandboxBash)}),
		todo.New(),
	}
}

// fixedToolset is a toolset whose registry never changes.
func fixedToolset(ts Toolset) Toolset {
	r := ts.Registry
	ts.Current = func(context.Context) *tool.Registry { return r }
	ts.Release = func() {}
	return ts
}

func (a *App) webTools(cfg *config.Config) ([]tool.Tool, bool, error) {
	w := cfg.Web
	fetch, err := web.NewFetch(web.FetchOptions{
		MaxBytes: int64(w.FetchMaxBytes), Timeout: time.Duration(w.FetchTimeoutSeconds) * time.Second,
		MaxRedirects: w.MaxRedirects, OutputLimit: cfg.Tools.OutputLimitBytes, AutoApprove: w.AutoApproveDomains,
		Guard: netguard.New(netguard.Options{AllowPrivate: w.AllowPrivateAddresses}),
	})
	if err != nil {
		return nil, false, err
	}
	list := []tool.Tool{fetch}
	switch w.Search {
	case config.SearchSearXNG, config.SearchBrave:
		key := ""
		if w.Search == config.SearchBrave {
			k, err := cfg.BraveAPIKey(a.opts.Env)
			if err != nil {
				return nil, false, err
			}
			key = k.Reveal()
		}
		search, err := web.NewSearch(web.SearchOptions{Backend: w.Search, SearXNGURL: w.SearXNGURL, BraveURL: w.BraveURL, BraveKey: key,
			MaxResults: w.MaxSearchResults, Timeout: time.Duration(w.FetchTimeoutSeconds) * time.Second})
		if err != nil {
			return nil, false, err
		}
		list = append(list, search)
	case config.SearchProvider:
		return list, true, nil
	}
	return list, false, nil
}

func (a *App) agentOptions(cfg *config.Config, depth int) agents.Options {
	over := map[string]agents.Override{}
	for name, o := range cfg.Agents {
		over[name] = agentOverride(o)
	}
	return agents.Options{
		Layout: a.opts.Layout, UserHome: paths.UserHome(a.opts.Env), PathEnv: a.opts.Env["PATH"], Env: a.environ(), KeyVars: cfg.KeyVariables(),
		Overrides: over, DefaultTimeout: time.Duration(cfg.Tools.AgentTimeoutSeconds) * time.Second,
		MaxTimeout: time.Duration(cfg.Tools.MaxTimeoutSeconds) * time.Second, InstanceID: a.opts.InstanceID,
		ParentChain: a.opts.Env[delegation.EnvParent], Depth: depth, OutputLimit: cfg.Tools.OutputLimitBytes,
		Tracker: a.opts.Tracker, Contain: a.opts.Contain, Logger: a.opts.Logger, Sandbox: a.Sandbox(cfg, config.SandboxAgents),
	}
}

// agentOverride is one [agents.<name>] table as the adapter's override.
func agentOverride(o config.AgentOverride) agents.Override {
	clone := func(p *[]string) []string {
		if p == nil {
			return nil
		}
		return append([]string{}, (*p)...)
	}
	return agents.Override{Command: o.Command, Args: clone(o.Args), PromptArgs: clone(o.PromptArgs),
		ModelArgs: clone(o.ModelArgs), EffortArgs: clone(o.EffortArgs), Permissions: o.Permissions, Transport: o.Transport}
}

// recorder records bash calls in the tracker's home (none without one).
func (a *App) recorder() bash.Recorder {
	if a.opts.Tracker == nil {
		return nil
	}
	return a.opts.Tracker
}

// without drops from env (KEY=VALUE entries) every variable named in
// remove: an exact name, or a prefix ending in "*".
func without(env, remove []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(remove, func(r string) bool {
			pre, pattern := strings.CutSuffix(r, "*")
			return k == r || pattern && strings.HasPrefix(k, pre)
		}) {
			out = append(out, kv)
		}
	}
	return out
}

// environ is the process environment as KEY=VALUE, sorted.
func (a *App) environ() []string {
	out := make([]string, 0, len(a.opts.Env))
	for k, v := range a.opts.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Warm prepares, in the background, what the first session would
// otherwise wait for: the model catalogue's decoding (about 20 ms of CPU,
// 0.5 MB kept) when the active provider profile of cfg is served where the
// catalogue could know its models (catalog.Served; a local endpoint never
// needs it, and another profile is looked up when a session first uses
// it). The daemon calls it once its configuration is loaded, so it runs
// beside the store and the socket rather than inside the first
// session.start. Close waits for it.
func (a *App) Warm(cfg *config.Config) {
	if _, p := cfg.ActiveProvider(); catalog.Served(p.BaseURL) {
		a.warming.Go(a.catalog.Warm)
	}
}

// WarmForSession is Warm for a process about to start a session at once
// (scv exec, scv acp, the TUI without a daemon): it also builds the
// built-in tools aside, whose schemas are resolved once per process and
// shared (tool.Define), their first encoding filling encoding/json's
// caches (≈ 2 ms of CPU off the first session.start). The daemon does not:
// an idle daemon would hold them for nothing (≈ 1 MiB).
func (a *App) WarmForSession(cfg *config.Config) {
	a.Warm(cfg)
	a.warming.Go(func() { a.builtins(cfg) })
}

// NewSession implements server.Factory. A stored session (req.Stored)
// keeps the endpoint it was stored with unless the request overrides it
// (resumeOverrides); the key is the one given for the endpoint the session
// ends up with (sessionKey).
func (a *App) NewSession(ctx context.Context, id string, req server.SessionRequest) (*agent.Session, server.SessionInfo, error) {
	over, wire := config.Overrides{Model: req.Model, Provider: req.Provider, BaseURL: req.BaseURL}, ""
	if req.Stored != nil {
		over, wire = resumeOverrides(over, *req.Stored)
	}
	loaded, err := a.LoadConfig(req.Cwd, over)
	if err != nil {
		return nil, server.SessionInfo{}, err
	}
	cfg := &loaded.Config
	if wire != "" {
		name, prof := cfg.ActiveProvider()
		prof.WireAPI = wire
		cfg.Providers[name] = prof
	}
	depth := max(req.DelegationDepth, a.Depth())
	extra, err := a.ClientMCPServers(cfg, req.MCPServers, req.Cwd)
	if err != nil {
		return nil, server.SessionInfo{}, err
	}
	ts, err := a.tools(cfg, req.Cwd, depth, req.NoTools, req.Store, extra...)
	if err != nil {
		return nil, server.SessionInfo{}, err
	}
	client, modelName, env, err := a.sessionModel(cfg, over, req)
	if err != nil {
		ts.Release()
		return nil, server.SessionInfo{}, err
	}
	instructions, skills := a.promptParts(req.Cwd, req.NoTools, ts)
	policy, err := approval.Parse(cfg.Tools.ApprovalPolicy)
	if err != nil {
		ts.Release()
		return nil, server.SessionInfo{}, err
	}
	profName, prof := cfg.ActiveProvider()
	maxSteps, stepsSetting := cfg.Agent.MaxSteps, ""
	if a.opts.MaxSteps > 0 {
		maxSteps, stepsSetting = a.opts.MaxSteps, "--max-steps"
	}
	hk := a.Hooks(cfg, req.Cwd, id)
	// A tool-free session (a remote chat sender's) reads no workspace
	// file, so its prompts' @path mentions stay text.
	var mentions func(context.Context, string, []int64) mention.Expansion
	if !req.NoTools {
		mentions = mention.Expander{Workspace: req.Cwd, Limit: cfg.Tools.OutputLimitBytes, Source: fs.MentionSource(req.Cwd)}.Expand
	}
	describe := a.describer(loaded)
	sess := agent.New(agent.Options{
		Model: client, ModelName: modelName, ReasoningEffort: prof.ReasoningEffort, Registry: ts.Registry, Tools: ts.Current, Policy: policy,
		SystemPrompt: agent.Prompt(cfg.Agent.SystemPrompt, req.Cwd, instructions, skills), HostedWebSearch: ts.HostedSearch,
		MaxSteps: maxSteps, MaxStepsSetting: stepsSetting, Workspace: req.Cwd, SessionID: id, OutputLimit: cfg.Tools.OutputLimitBytes,
		Secrets: cfg.SecretValues(env), Rules: a.opts.Allow, Hooks: hk, Mentions: mentions, Describe: describe,
		SavedRules: loaded.Config.Approvals.Grants(), RuleBook: a.saved,
		Context: agent.ContextOptions{MaxTokens: cfg.Context.MaxTokens, ReserveOutputTokens: cfg.Context.ReserveOutputTokens,
			SafetyMarginTokens: cfg.Context.SafetyMarginTokens, BytesPerToken: cfg.Context.BytesPerToken, SummaryMaxChars: cfg.Context.SummaryMaxChars},
		History: agent.HistoryOptions{MaxBytes: cfg.Session.MaxHistoryBytes, MaxMessages: cfg.Session.MaxMessages},
	})
	a.sessions.Add(1)
	queued := cfg.Session.MaxQueuedTurns
	if queued == 0 {
		queued = -1 // SessionInfo's "no queue"; its 0 means "the server's default"
	}
	info := server.SessionInfo{Cwd: req.Cwd, Model: modelName, ContextMaxTokens: describe(modelName).ContextWindow, Tools: ts.Registry.Names(),
		Switch: a.switcher(req.Cwd, req.SessionStart), Profiles: a.profiles(req.Cwd), ListProfile: a.profileLister(req.Cwd, req.SessionStart),
		WireAPI: prof.WireAPI, BaseURL: prof.BaseURL, Undo: fs.Undo,
		MaxQueuedTurns: queued, MaxPromptBytes: cfg.Session.MaxPromptBytes, Provider: profName, DelegationDepth: depth,
		UserCommands: a.userCommands(), ReportTurns: cfg.Agent.ReportTurns == config.ReportTurnsAuto,
		Close: func() { a.sessionHooks(context.Background(), hk, hooks.SessionEnd); ts.Release(); a.sessions.Add(-1) }}
	return sess, info, nil
}

// userCommands is the user's custom commands directory ("" without an
// SCV home).
func (a *App) userCommands() string {
	if a.opts.Layout.Home == "" {
		return ""
	}
	return a.opts.Layout.CommandsDir()
}

// Sessions is the number of open sessions built by this app.
func (a *App) Sessions() int { return int(a.sessions.Load()) }

// sessionModel is the model client of a session on cfg, its model name and
// the environment its key came from (the process's when the session brings
// no key of its own). Without a key the session still opens when the app's
// KeyOptional says so, on a client whose every request fails naming it.
func (a *App) sessionModel(cfg *config.Config, over config.Overrides, req server.SessionRequest) (model.Client, string, map[string]string, error) {
	var client model.Client
	var modelName string
	var err error
	env, keyErr := a.sessionKey(cfg, req.Cwd, over, req.SessionStart)
	if keyErr == nil {
		_, keyErr = cfg.APIKey(env) // a missing key: the message names the variable
	}
	switch {
	case keyErr == nil:
		client, modelName, err = a.modelClient(cfg, env)
	case a.opts.KeyOptional:
		_, prof := cfg.ActiveProvider()
		client, modelName = keyless{keyErr}, prof.Model
	default:
		err = keyErr
	}
	if err != nil {
		return nil, "", nil, err
	}
	if env == nil {
		env = a.opts.Env
	}
	return client, modelName, env, nil
}

// promptParts are the instruction files of workspace (an unreadable one is
// logged, not fatal) and the system prompt's guidance section: the skills
// (none for a tool-free session) after the todo list's guidance when
// todo_write is a tool.
func (a *App) promptParts(workspace string, noTools bool, ts Toolset) (agent.Instructions, string) {
	instructions, err := agent.ReadInstructions(a.opts.Layout.Home, workspace)
	if err != nil {
		a.opts.Logger.Warn("read instruction files", "err", err)
	}
	skills := ""
	if !noTools {
		skills = ts.Skills.PromptSection()
	}
	if _, ok := ts.Registry.Get("todo_write"); ok {
		skills = strings.TrimSpace(todo.Guidance + "\n\n" + skills)
	}
	return instructions, skills
}

// modelClient builds the active provider's client with the key taken from
// env; a missing key is an error that names the variable to set.
func (a *App) modelClient(cfg *config.Config, env map[string]string) (model.Client, string, error) {
	name, prof := cfg.ActiveProvider()
	key, err := cfg.APIKey(env)
	if err != nil {
		return nil, "", err
	}
	headers := map[string]string{}
	for k, v := range prof.Headers {
		headers[k] = v.Reveal()
	}
	l := cfg.ProviderLimits
	client, err := model.New(model.Options{
		WireAPI: prof.WireAPI, BaseURL: prof.BaseURL, APIKey: key.Reveal(), KeySource: keySource(name, prof), Headers: headers, Model: prof.Model,
		ReasoningEffort: prof.ReasoningEffort, Timeout: time.Duration(prof.TimeoutSeconds) * time.Second, MaxRetries: prof.MaxRetries,
		Limits: model.Limits{MaxSSEEventBytes: l.MaxSSEEventBytes, MaxResponseBytes: l.MaxResponseBytes, MaxAssistantBytes: l.MaxAssistantBytes,
			MaxToolCalls: l.MaxToolCalls, MaxToolArgumentsBytes: l.MaxToolArgumentsBytes},
		Logger: a.opts.Logger,
	})
	if err != nil {
		return nil, "", fmt.Errorf("provider %s: %w", name, err)
	}
	return client, prof.Model, nil
}

// keyless is the model client of a session whose provider key is missing
// (Options.KeyOptional): every request fails with the key's message.
type keyless struct{ err error }

func (k keyless) Stream(context.Context, model.Request, func(model.Delta)) (model.Response, error) {
	return model.Response{}, &model.Error{Code: model.CodeProvider, Message: k.err.Error()}
}

// NoOverrides is LoadConfig without session overrides.
var NoOverrides = config.Overrides{}
