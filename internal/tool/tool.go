// Package tool defines the contract every built-in tool implements: a name, a
// model-facing description, a JSON Schema for its input, a risk decided per
// call after validation, an approval summary and an executor. It also holds
// the Registry that validates input before any risk or approval decision,
// and the path rules the file tools and the approval rules share: which
// paths look secret-like and which are guarded (guard.go).
//
// Nothing in this package names a concrete tool; the loop, the server and the
// clients only ever see the contract.
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scv-agent/scv/internal/filechange"
)

// Risk is the side-effect class of one call, decided after its arguments are
// validated. The values are stable protocol strings.
type Risk string

// Stable risk values (docs/runtime.md, "Approvals and risk").
const (
	ReadOnly   Risk = "read_only"
	Filesystem Risk = "filesystem"
	Process    Risk = "process"
	Delegate   Risk = "delegate"
	Network    Risk = "network"
)

// ErrorKind classifies a failed result: the error of tool.completed
// (docs/runtime.md, "The client protocol").
type ErrorKind string

// Error kinds a failed result may carry.
const (
	Denied           ErrorKind = "denied"
	Cancelled        ErrorKind = "cancelled"
	InvalidArguments ErrorKind = "invalid_arguments"
	Unavailable      ErrorKind = "unavailable"
	Limit            ErrorKind = "limit"
	UnknownTool      ErrorKind = "unknown_tool"
	Failed           ErrorKind = "failed"
	// SessionBusy: the conversation a call continues has a call running.
	SessionBusy ErrorKind = "session_busy"
)

// Env is what the server hands every call: where it runs and how much it may
// return. Tools receive their own defaults (timeouts, byte caps) through their
// Options at construction.
type Env struct {
	// Workspace is the session's canonical, absolute workspace root.
	Workspace string
	// SessionID and CallID identify the call for records and logs.
	SessionID string
	CallID    string
	// OutputLimit is tools.output_limit_bytes: the most output a result carries.
	OutputLimit int
	// Progress, when non-nil, receives short human-readable progress lines.
	// The server bounds, redacts and rate-limits them; they never reach the
	// model.
	Progress func(text string)
	// Changed, when non-nil, is told every workspace file a call wrote,
	// with its content before (what undo restores).
	Changed func(filechange.Change)
	// Todos, when non-nil, receives the session's new todo list from a
	// todo_write call (the server keeps it and tells the clients).
	Todos func([]TodoItem)
	// Ask, when non-nil, asks a nested approval while the call runs: a
	// step the call's own child wants to take (a delegated agent's
	// permission request), judged by the session's policy and, when the
	// policy asks, by the same approver as the call itself. It returns
	// whether the step may go ahead and, when not, why. nil denies.
	Ask func(ctx context.Context, step Plan) (approved bool, why string)
	// AskAlone is Ask for when no one can be asked (a background job,
	// after its call returned): the session's policy alone decides, and
	// a step the policy would ask a person about is denied, saying why.
	// nil denies.
	AskAlone func(ctx context.Context, step Plan) (approved bool, why string)
}

// TodoItem is one entry of a session's todo list: what the step is and
// whether it is pending, in_progress or completed.
type TodoItem struct {
	Content, Status string
}

// Result is what one call produced. A failed call is still a Result the model
// sees; a Go error from the runtime is something else entirely.
type Result struct {
	Success bool
	// Error is empty on success and one of the ErrorKind values otherwise.
	Error ErrorKind
	// Output is the text the model sees.
	Output string
	// JSON says Output is a JSON document (clients may print it as a value).
	JSON bool
	// Truncated says something was cut to respect a limit.
	Truncated bool
}

// Plan is a validated call, ready for the approval decision and then Run.
type Plan struct {
	Risk Risk
	// Summary is what an approver sees: the full command, URL, path, etc.
	Summary string
	// Diff, when set, previews the change a call makes to a file, for the
	// approver; it is never part of what the model sees.
	Diff *Diff
	// Command is the command line of a call that runs one (bash): a
	// session grant for such a call covers only commands that start with
	// a prefix of words the approver confirms.
	Command string
	// NoGrant says no session grant may ever cover the call: it is asked
	// about every time (a delegated agent with full permissions, a read of
	// a secret-like file).
	NoGrant bool
	// NoGrantWhy, with NoGrant, says in one line why: the approver reads
	// it (a write to `.git/config`: "git's own directory: …").
	NoGrantWhy string
	// Paths are the workspace-relative slash paths a call writes: the path
	// as given and, when symbolic links lead elsewhere, where it resolves.
	// A session grant for such a call covers only writes whose every path
	// lies under the path the approver confirmed (docs/runtime.md §7.1).
	Paths []string
	// Host is the host a call reaches (web_fetch), with ":port" when the
	// port is not the scheme's default: a session grant or saved rule for
	// such a call covers only the hosts its domain matches.
	Host string
	// Confined says the call runs in the OS sandbox without network (a
	// sandboxed bash command): the ask-unsandboxed policy runs it unasked.
	Confined bool
	// Run executes the call. It must honour ctx and return promptly after
	// cancellation, with a Cancelled result.
	Run func(ctx context.Context) Result
}

// Diff is the bounded unified diff of a planned file change (see
// internal/diff): Text is empty when Note says why there is none; Added
// and Removed count the lines of the whole change, Omitted the diff lines
// left out of Text.
type Diff struct {
	Path, Text, Note        string
	Added, Removed, Omitted int
}

// Tool is one built-in tool.
type Tool interface {
	Name() string
	// Description is the model-facing description.
	Description() string
	// Schema is the JSON Schema of the input object.
	Schema() json.RawMessage
	// Plan checks already schema-valid arguments further (paths, ceilings),
	// decides the risk and the summary and binds the executor. A *Error it
	// returns becomes a failed result without any approval being asked.
	Plan(env Env, args json.RawMessage) (Plan, error)
}

// Error is a call-level failure detected before execution.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds a call-level error of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Fail is a failed result carrying a plain-text message.
func Fail(kind ErrorKind, format string, args ...any) Result {
	return Result{Error: kind, Output: fmt.Sprintf(format, args...)}
}

// JSONResult encodes v as the output of a result (EncodeJSON, so sizes
// computed with JSONLen hold). Encoding our own result structs cannot fail;
// if it ever does, the failure is reported, not hidden.
func JSONResult(success bool, kind ErrorKind, v any, truncated bool) Result {
	return JSONWithin(success, kind, v, truncated, 0)
}

// RiskClasser is implemented by tools that can state their risk class
// without arguments, for listings (`scv tools list`). The risk of a call is
// still decided per call by Plan.
type RiskClasser interface {
	RiskClass() string
}

// RiskClassOf returns t's declared risk class, or "per call".
func RiskClassOf(t Tool) string {
	if rc, ok := t.(RiskClasser); ok {
		return rc.RiskClass()
	}
	return "per call"
}

type classed struct {
	Tool
	class string
}

func (c classed) RiskClass() string { return c.class }

// WithRiskClass attaches a listing risk class to t, e.g. "read_only" or
// "read_only (filesystem for secret-like paths)".
func WithRiskClass(t Tool, class string) Tool { return classed{Tool: t, class: class} }
