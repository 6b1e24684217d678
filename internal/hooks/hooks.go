// Package hooks runs the user's hook commands at points of a session
// (docs/hooks.md): it matches an event (and the tool it concerns) against
// the configured hooks, runs each match through internal/proc in its own
// process group with the event as one JSON object on standard input, and
// turns exit statuses and replies into one Decision. Events in, decisions
// out: the agent loop decides what a decision does.
package hooks

import (
	"context"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/textcut"
)

// Events, in the order they happen.
const (
	SessionStart      = "session_start"
	UserPrompt        = "user_prompt"
	PreTool           = "pre_tool"
	PostTool          = "post_tool"
	ApprovalRequested = "approval_requested"
	TurnEnd           = "turn_end"
	SessionEnd        = "session_end"
)

// Outcomes of one hook run (Ran.Outcome).
const (
	OutcomeOK      = "ok"          // no objection (a notification, or allow)
	OutcomeDeny    = "deny"        // pre_tool: the call does not run
	OutcomeAsk     = "ask"         // pre_tool: a person must approve the call
	OutcomeBlock   = "block"       // user_prompt: the prompt is not sent
	OutcomeContext = "context"     // user_prompt: text added for the model
	OutcomeNote    = "note"        // post_tool: a note added to the result
	OutcomeFailed  = "hook_failed" // timed out, crashed, or replied nonsense
)

// On-error policies of a gating hook (pre_tool, user_prompt).
const (
	OnErrorDeny  = "deny"
	OnErrorAllow = "allow"
)

// Bounds.
const (
	// DefaultTimeout is a hook's time limit unless it sets its own.
	DefaultTimeout = 10 * time.Second
	// MaxFieldBytes bounds each long text of the event JSON (prompt,
	// arguments, result output); the JSON is therefore at most a few
	// times that.
	MaxFieldBytes = 64 << 10
	// MaxReplyBytes is the most of a hook's standard output read; more is
	// cut (and a cut JSON reply is a failed hook).
	MaxReplyBytes = 64 << 10
	// MaxTextBytes bounds the context or note one hook adds, and
	// MaxAddedBytes all of them together for one event.
	MaxTextBytes  = 8 << 10
	MaxAddedBytes = 16 << 10
	// MaxReasonBytes bounds a reason, and StderrTailBytes the end of
	// standard error a failed hook's event shows.
	MaxReasonBytes  = 2 << 10
	StderrTailBytes = 2 << 10
	// TagKey marks every process of one hook run. Without a Containment
	// it is how a process that left the group (setsid) is found and
	// stopped; with the subreaper mechanism it tells the orphans of
	// concurrent runs apart.
	TagKey = "SCV_HOOK_RUN"
)

// Hook is one configured hook.
type Hook struct {
	Name  string
	Event string
	// Match is a glob over tool names (path.Match syntax); "" matches
	// every tool, and every event without a tool.
	Match string
	// Command is the argv: a first word without a slash is looked up in
	// the PATH of Env, a relative path is taken from the workspace.
	Command []string
	// Timeout 0 means DefaultTimeout.
	Timeout time.Duration
	// OnError is what a failure of a gating hook means: OnErrorDeny
	// (also for "") or OnErrorAllow.
	OnError string
	// Source is the config file that defined the hook.
	Source string
}

// Options configure a Runner.
type Options struct {
	Hooks []Hook
	// Env is the hooks' environment: the same scrubbed one as the bash
	// tool's (KEY=VALUE entries).
	Env       []string
	Workspace string
	SessionID string
	// Contain, when set, holds every process of a hook run in one scope
	// (a cgroup v2 leaf, or the orphans this subreaper adopts), stopped as
	// a whole when the hook ends: the same containment as the bash tool's.
	// A run then costs its own processes only. nil (or the group+tag
	// mechanism) falls back to the process group plus a sweep of every
	// process's environment for the run's tag after each run.
	Contain *proc.Containment
	Logger  *slog.Logger
}

// Runner runs one session's hooks. A nil *Runner has no hooks: every
// method is cheap and safe on it, so a session without hooks pays nothing.
type Runner struct {
	opts    Options
	byEvent map[string][]Hook
	pathEnv string
	// baseEnv is opts.Env without the variables a hook run sets itself.
	baseEnv []string
}

// New returns the runner of opts, or nil when there are no hooks.
func New(opts Options) *Runner {
	if len(opts.Hooks) == 0 {
		return nil
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{opts: opts, byEvent: map[string][]Hook{}}
	for _, h := range opts.Hooks {
		r.byEvent[h.Event] = append(r.byEvent[h.Event], h)
	}
	for _, kv := range opts.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			r.pathEnv = v
		}
		if k, _, _ := strings.Cut(kv, "="); !ownVar(k) {
			r.baseEnv = append(r.baseEnv, kv)
		}
	}
	return r
}

// Hooks lists the runner's hooks in the order they run.
func (r *Runner) Hooks() []Hook {
	if r == nil {
		return nil
	}
	return r.opts.Hooks
}

// Has reports whether some hook would run for event (and tool, for the
// tool events).
func (r *Runner) Has(event, tool string) bool {
	if r == nil {
		return false
	}
	for _, h := range r.byEvent[event] {
		if matches(h, tool) {
			return true
		}
	}
	return false
}

func matches(h Hook, tool string) bool {
	if h.Match == "" {
		return true
	}
	ok, _ := path.Match(h.Match, tool)
	return ok
}

// Decision is what the hooks of one event decided together.
type Decision struct {
	// Deny: pre_tool, the call does not run; user_prompt, the prompt is
	// blocked. Reason says why and Hook which hook decided.
	Deny   bool
	Reason string
	Hook   string
	// Ask: pre_tool, a person must approve the call whatever the policy
	// or the session's grants say (Reason says why).
	Ask bool
	// Context (user_prompt) and Note (post_tool) are the texts the hooks
	// added for the model, each introduced by its hook's name.
	Context string
	Note    string
}

// Ran is one hook run, as the hook.ran event shows it.
type Ran struct {
	Hook, Event, Tool string
	Duration          time.Duration
	Outcome           string
	// Reason is the reason of a deny, ask or block, or what went wrong.
	Reason string
	// Stderr is the end of a failed hook's standard error.
	Stderr   string
	ExitCode *int
}

// Run runs the hooks of in.Event that match in's tool, in order, and
// reports each run to report (nil: not reported). A deny or block stops
// the hooks after it. A nil Runner decides nothing.
func (r *Runner) Run(ctx context.Context, in Input, report func(Ran)) Decision {
	var d Decision
	if r == nil {
		return d
	}
	tool := ""
	if in.Tool != nil {
		tool = in.Tool.Name
	}
	in.SessionID, in.Cwd = r.opts.SessionID, r.opts.Workspace
	for _, h := range r.byEvent[in.Event] {
		if !matches(h, tool) {
			continue
		}
		ran, reply := r.runOne(ctx, h, in)
		ran.Tool = tool
		if report != nil {
			report(ran)
		}
		r.opts.Logger.Debug("hook ran", "hook", h.Name, "event", in.Event, "outcome", ran.Outcome, "duration", ran.Duration)
		switch ran.Outcome {
		case OutcomeDeny, OutcomeBlock:
			return Decision{Deny: true, Reason: ran.Reason, Hook: h.Name, Context: d.Context, Note: d.Note}
		case OutcomeAsk:
			if !d.Ask {
				d.Ask, d.Reason, d.Hook = true, ran.Reason, h.Name
			}
		case OutcomeContext:
			d.Context = addText(d.Context, h.Name, reply)
		case OutcomeNote:
			d.Note = addText(d.Note, h.Name, reply)
		case OutcomeFailed:
			if gating(in.Event) && h.OnError != OnErrorAllow {
				return Decision{Deny: true, Hook: h.Name, Context: d.Context, Note: d.Note,
					Reason: "the hook failed (" + ran.Reason + ") and its on_error is \"deny\""}
			}
		}
	}
	return d
}

// gating says a failure of a hook of event stops what it guards.
func gating(event string) bool { return event == PreTool || event == UserPrompt }

// addText appends one hook's text to what the hooks added so far, within
// MaxAddedBytes.
func addText(sofar, hook, text string) string {
	part := "[hook " + hook + "]\n" + text
	if sofar != "" {
		part = "\n\n" + part
	}
	if room := MaxAddedBytes - len(sofar); len(part) > room {
		if room <= 0 {
			return sofar
		}
		part = textcut.Prefix(part, room)
	}
	return sofar + part
}
