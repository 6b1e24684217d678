package proto

import "encoding/json"

// The tool family: the lifecycle of one tool call inside a turn, and its
// approval.

const (
	TypeApprovalResolve = "approval.resolve"

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
// what it would do and Risk is its risk class.
type ApprovalRequested struct {
	TurnHeader
	Cwd        string `json:"cwd"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	ApprovalID string `json:"approval_id"`
	Risk       string `json:"risk"`
	Summary    string `json:"summary"`
}

func (*ApprovalRequested) EventType() string { return EventApprovalRequested }

// ApprovalResolve answers approval.requested.
type ApprovalResolve struct {
	Envelope
	SessionID  string `json:"session_id"`
	ApprovalID string `json:"approval_id"`
	Approved   bool   `json:"approved"`
}

func (*ApprovalResolve) MessageType() string { return TypeApprovalResolve }
func (m *ApprovalResolve) Target() string    { return m.SessionID }

// ToolStarted says a call runs now (after its approval, if one was asked).
// Summary (an SCV extension, the approval's text) is present when the tool
// gave one, so a call that ran without an approval still shows what it
// does.
type ToolStarted struct {
	TurnHeader
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Summary string `json:"summary,omitempty"`
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
