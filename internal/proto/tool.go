package proto

import "encoding/json"

// The tool family: the lifecycle of one tool call inside a turn, its
// approval, and the session's grants ("allow for this session").

const (
	TypeApprovalResolve = "approval.resolve"
	TypeApprovalGrants  = "approval.grants"
	TypeApprovalRevoke  = "approval.revoke"

	EventApprovalGrants = "approval.grants"

	EventToolProposed      = "tool.proposed"
	EventApprovalRequested = "approval.requested"
	EventToolStarted       = "tool.started"
	EventToolProgress      = "tool.progress"
	EventToolCompleted     = "tool.completed"
)

// ToolProposed announces a call the model asked for; Arguments is the
// model's JSON (a string holding the raw text when it was not JSON).
type ToolProposed struct {
	TurnHeader
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (*ToolProposed) EventType() string { return EventToolProposed }

// ApprovalRequested asks the client to approve a call; Summary says exactly
// what it would do and Risk is its risk class. Diff (a write's planned
// change) and Grant (what "allow for this session" would cover; absent
// when the call can never be allowed so) are SCV extensions.
type ApprovalRequested struct {
	TurnHeader
	Cwd        string `json:"cwd"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	ApprovalID string `json:"approval_id"`
	Risk       string `json:"risk"`
	Summary    string `json:"summary"`
	Diff       *Diff  `json:"diff,omitempty"`
	Grant      *Grant `json:"grant,omitempty"`
	// Reason says in one line why the call is asked although the session
	// has grants of its tool, why it can never be granted, or why the
	// offered grant is narrower than usual. An SCV extension.
	Reason string `json:"reason,omitempty"`
}

func (*ApprovalRequested) EventType() string { return EventApprovalRequested }

// Diff is the planned change of one file, shown to the approver and never
// to the model: a unified diff bounded in lines and bytes (Text, empty
// when Note says why there is none), the line counts of the whole change,
// and how many diff lines Text leaves out.
type Diff struct {
	Path    string `json:"path"`
	Text    string `json:"text"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Omitted int    `json:"omitted_lines,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Grant is one session grant: later calls of Tool with Risk run without
// asking; for a command tool only the exact Command and the commands that
// start with Prefix, for a write only the paths under Path (a directory
// with a final slash, "./" for the workspace, or one file). GrantID is set
// in approval.grants and absent in an offer.
type Grant struct {
	GrantID string `json:"grant_id,omitempty"`
	Tool    string `json:"tool"`
	Risk    string `json:"risk"`
	Prefix  string `json:"prefix,omitempty"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	// Domain is the host (or "*.host") a grant of a web_fetch covers.
	Domain string `json:"domain,omitempty"`
	// Source says where a rule came from ("--allow", or the file:line of
	// a saved rule); absent for a grant a person gave.
	Source string `json:"source,omitempty"`
	// Decision is "allow" or "deny" for a saved rule ([[approvals.rules]]),
	// absent otherwise; Workspace is the directory a saved rule is limited
	// to, absent for every workspace.
	Decision  string `json:"decision,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// Decisions of a saved rule.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// AnyRisk is the risk of a grant that covers its tool's calls whatever
// their risk (a rule the session started with).
const AnyRisk = "any"

// Scopes of an approval.resolve.
const (
	ScopeCall    = "call"
	ScopeSession = "session"
	// ScopeRule ("always (save rule)") saves the offered grant as an
	// allow rule in the user config; it covers this session at once.
	ScopeRule = "rule"
)

// MaxReasonBytes bounds approval.resolve.reason.
const MaxReasonBytes = 2000

// ApprovalResolve answers approval.requested. The optional fields are SCV
// extensions: Scope "session" (with Approved) also allows later matching
// calls, Prefix is the command prefix such a grant covers (Exact: none,
// this command only), Path the file or directory a write grant covers,
// Reason goes to
// the model with a denial, and CancelTurn denies and cancels the turn in
// one step.
type ApprovalResolve struct {
	Envelope
	SessionID  string `json:"session_id"`
	ApprovalID string `json:"approval_id"`
	Approved   bool   `json:"approved"`
	Scope      string `json:"scope,omitempty"`
	Prefix     string `json:"prefix,omitempty"`
	Exact      bool   `json:"exact,omitempty"`
	Path       string `json:"path,omitempty"`
	Reason     string `json:"reason,omitempty"`
	CancelTurn bool   `json:"cancel_turn,omitempty"`
}

func (*ApprovalResolve) MessageType() string { return TypeApprovalResolve }
func (m *ApprovalResolve) Target() string    { return m.SessionID }

// ApprovalGrantsRequest asks for the session's grants; approval.grants
// answers. An SCV extension.
type ApprovalGrantsRequest struct {
	Envelope
	SessionID string `json:"session_id"`
}

func (*ApprovalGrantsRequest) MessageType() string { return TypeApprovalGrants }
func (m *ApprovalGrantsRequest) Target() string    { return m.SessionID }

// ApprovalRevoke removes one grant of the session; approval.grants answers
// with those left. An SCV extension.
type ApprovalRevoke struct {
	Envelope
	SessionID string `json:"session_id"`
	GrantID   string `json:"grant_id"`
}

func (*ApprovalRevoke) MessageType() string { return TypeApprovalRevoke }
func (m *ApprovalRevoke) Target() string    { return m.SessionID }

// ApprovalGrantsReply lists the session's grants, oldest first; it answers
// approval.grants and approval.revoke. An SCV extension.
type ApprovalGrantsReply struct {
	SessionHeader
	Grants []Grant `json:"grants"`
	// Rules are the saved rules that apply to the session (Decision
	// set), deny and allow; absent when there are none.
	Rules []Grant `json:"rules,omitempty"`
}

func (*ApprovalGrantsReply) EventType() string { return EventApprovalGrants }

// ToolStarted says a call runs now (after its approval, if one was asked).
// Summary (an SCV extension, the approval's text) is present when the tool
// gave one, so a call that ran without an approval still shows what it
// does; so is Diff, for a call that ran without an approval.requested.
// GrantID names the session grant or rule that let it run without asking;
// Granted is the session grant its approval added ("allow for this
// session"), so a stored turn says so as the live one did.
type ToolStarted struct {
	TurnHeader
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Summary string `json:"summary,omitempty"`
	Diff    *Diff  `json:"diff,omitempty"`
	GrantID string `json:"grant_id,omitempty"`
	Granted *Grant `json:"granted,omitempty"`
	// Rule is the saved rule that let it run without asking (GrantID is
	// its id; Source says file:line).
	Rule *Grant `json:"rule,omitempty"`
}

func (*ToolStarted) EventType() string { return EventToolStarted }

// ToolProgress is the latest line of a running call's output: one line, at
// most MaxProgressBytes, at most one per ProgressIntervalMS per call.
type ToolProgress struct {
	TurnHeader
	CallID string `json:"call_id"`
	Text   string `json:"text"`
}

func (*ToolProgress) EventType() string { return EventToolProgress }

// ToolCompleted is a call's result as the model sees it. Error is one of
// the Tool* kinds, present exactly when Success is false.
type ToolCompleted struct {
	TurnHeader
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Success   bool   `json:"success"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	Error     string `json:"error,omitempty"`
}

func (*ToolCompleted) EventType() string { return EventToolCompleted }
