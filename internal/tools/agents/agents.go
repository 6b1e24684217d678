// Package agents holds the native agent adapters: one descriptor per agent
// CLI (claude, codex, grok, dsh, pi) with its default command line, private
// home layout, scrubbed variables, permission switches and output format;
// the argv and environment builders; the stream parsers that keep only a
// run's reply, usage and error; and the agent_<name> tools. Signing an agent
// in to its private home is internal/signin's.
package agents

import (
	_ "embed"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
)

//go:embed agent.md
var descriptionTemplate string

// Options configure the agent tools.
type Options struct {
	// Layout is the instance home ($SCV_HOME).
	Layout paths.Layout
	// UserHome is the invoking user's home (for ~/.local/bin, ~/.grok/bin).
	UserHome string
	// PathEnv is the server's PATH.
	PathEnv string
	// Env is the server's environment (KEY=VALUE); children get it scrubbed.
	Env []string
	// KeyVars are the variables holding the keys of SCV's provider
	// profiles and web search (their api_key_env names); children never
	// inherit them.
	KeyVars []string
	// Overrides are the [agents.<name>] settings of the user config.
	Overrides map[string]Override
	// DefaultTimeout is tools.agent_timeout_seconds, MaxTimeout
	// tools.max_timeout_seconds.
	DefaultTimeout, MaxTimeout time.Duration
	// InstanceID names this SCV instance in SCV_PARENT.
	InstanceID string
	// ParentChain is the inherited SCV_PARENT (when SCV itself runs
	// delegated); Depth is the calling session's delegation depth.
	ParentChain string
	Depth       int
	// OutputLimit is tools.output_limit_bytes: the bound of a reply.
	OutputLimit int
	// Tracker records runs; nil runs without records (tests only).
	Tracker *delegation.Tracker
	// Contain, when set, holds every process of a run in one scope
	// stopped at its end, so no tag sweep of the whole system is needed.
	Contain *proc.Containment
	Logger  *slog.Logger
	// Sandbox confines every run when its mode is on; the agent's own
	// home (its sign-in and state) stays writable.
	Sandbox sandbox.Config
	// Conversations is the process's registry of conversations with
	// delegated agents (the `session` argument); nil keeps them in memory
	// for the tools of this call of Available only.
	Conversations *delegation.Registry
	// Jobs holds the background jobs (`background: true`) and adds
	// agent_status, agent_wait and agent_cancel; nil refuses background
	// calls.
	Jobs *jobs.Table
	// ACP holds the running ACP adapters of transport = "acp" agents
	// (acp.go); nil makes one for the tools of this call of Available.
	ACP *ACPPool
}

// Defaults of the [tools] keys (docs/configuration.md).
const (
	DefaultAgentTimeout = 3600 * time.Second
	DefaultMaxTimeout   = 14400 * time.Second
	DefaultOutputLimit  = 65536
	// StderrTailBytes is how much of stderr a result keeps.
	StderrTailBytes = 2048
)

func (o *Options) fill() {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultAgentTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = DefaultOutputLimit
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Conversations == nil {
		o.Conversations = delegation.NewRegistry(delegation.RegistryOptions{})
	}
	if o.ACP == nil {
		o.ACP = NewACPPool(o.Conversations.Max(), o.Conversations.Idle())
	}
}

// Adapters applies the overrides to every descriptor; agents with an
// invalid override are left out (config validation reports them).
func Adapters(overrides map[string]Override) []Adapter {
	var out []Adapter
	for _, d := range descriptors {
		a, err := Apply(d, overrides[d.Name])
		if err != nil {
			continue
		}
		out = append(out, a)
	}
	return out
}

// Available returns agent_<name> for every agent whose executable resolves
// now. The caller decides whether delegation is allowed at all (depth below
// agent.max_delegation_depth) and calls this at session start.
func Available(opts Options) []tool.Tool {
	opts.fill()
	var out []tool.Tool
	for _, a := range Adapters(opts.Overrides) {
		exe, err := a.Resolve(opts.UserHome, opts.PathEnv)
		if err != nil {
			continue
		}
		out = append(out, newTool(opts, a, exe))
	}
	if opts.Jobs != nil && len(out) > 0 {
		out = append(out, jobTools(opts)...)
	}
	return out
}

// Params is the shared input of the agent tools.
type Params struct {
	Prompt         string `json:"prompt" jsonschema:"the task for the agent, self-contained: it sees none of this conversation"`
	Cwd            string `json:"cwd,omitempty" jsonschema:"directory inside the workspace to run in (relative or absolute); default the workspace root. Running in a project directory picks up that project's AGENTS.md/CLAUDE.md and skills"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the run is killed"`
	Model          string `json:"model,omitempty"`
	Effort         string `json:"effort,omitempty"`
	Session        string `json:"session,omitempty"`
	Background     bool   `json:"background,omitempty" jsonschema:"run as a background job of this session: the call returns at once with a job handle; agent_status, agent_wait and agent_cancel follow it, and its end is reported to you in a later message"`
}

func newTool(opts Options, a Adapter, exe string) tool.Tool {
	fields, conv := "", "{{title}} cannot continue a conversation: every call starts fresh, so give each one the whole context."
	if a.Resumes() {
		fields = `"session","turn",`
		conv = "`session` (such as {{name}}-1) names the agent's conversation: pass it back as `session` to give a follow-up that builds on what the agent already did and knows (the call runs in that conversation's directory; `turn` counts its calls). A conversation takes one call at a time (session_busy otherwise) and closes when unused for long or when the session keeps too many; a call naming a closed one says so: start a new one."
	}
	desc := strings.NewReplacer("{{fields}}", fields, "{{conversation}}", conv).Replace(descriptionTemplate)
	desc = strings.NewReplacer("{{name}}", a.Name, "{{title}}", a.Title).Replace(desc) + backgroundNote(opts)
	t := &agentTool{opts: opts, a: a, exe: exe}
	return tool.WithRiskClass(tool.MustDefine("agent_"+a.Name, desc, t.adjustSchema, t.plan), string(tool.Delegate))
}

func (t *agentTool) adjustSchema(s *jsonschema.Schema) {
	min1, maxT := 1.0, float64(t.opts.MaxTimeout/time.Second)
	ts := s.Properties["timeout_seconds"]
	ts.Minimum, ts.Maximum = &min1, &maxT
	ts.Description = "seconds before the run is killed; default " +
		strconv.Itoa(int(t.opts.DefaultTimeout/time.Second)) + ", at most " + strconv.Itoa(int(maxT)) +
		"; raise it for long work such as builds, releases or landing a change"
	if len(t.a.ModelArgs) == 0 {
		delete(s.Properties, "model")
	} else {
		s.Properties["model"].Description = "model for this run: " + t.a.ModelHint +
			". Set only when the user asks for a model; omitted, the agent uses its own configured default"
	}
	if len(t.a.EffortArgs) == 0 {
		delete(s.Properties, "effort")
	} else {
		e := s.Properties["effort"]
		e.Enum = []any{"", "low", "medium", "high", "xhigh", "max"}
		e.Description = "reasoning effort for this run. Set only when the user asks; omitted, the agent uses its own default"
	}
	if t.a.Resumes() {
		s.Properties["session"].Description = "continue an earlier conversation with " + t.a.Title + ": the `session` handle (such as " + t.a.Name +
			"-1) a previous agent_" + t.a.Name + " result returned; the agent then remembers that conversation and works in its directory. Omit to start a new conversation"
	} else {
		s.Properties["session"].Description = t.a.Title + " cannot continue a conversation: leave this out (a call with it is refused); every call starts fresh"
	}
	t.adjustBackground(s)
	s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r != "prompt" })
}
