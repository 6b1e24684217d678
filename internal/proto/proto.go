// Package proto defines SCV's client protocol (docs/protocol.md): newline-
// delimited JSON messages, their types and fields, error and failure codes,
// and the protocol limits. It imports nothing internal, so clients (the TUI,
// scv exec, third-party tools) depend on it alone.
package proto

import "encoding/json"

// Version is PROTOCOL_VERSION.
const Version = 1

// Frame limits (defaults of [protocol]); encoded JSON, newline excluded.
const (
	MaxClientFrameBytes = 1 << 20
	MaxServerFrameBytes = 8 << 20
	MaxPromptBytes      = 256 << 10
	// Writer queue bounds and the slow-client rule.
	MaxQueuedFrames    = 256
	MaxQueuedBytes     = 16 << 20
	SlowClientSeconds  = 3
	MaxProgressBytes   = 200
	ProgressIntervalMS = 500
)

// Client → server message types.
const (
	TypeInitialize     = "initialize"
	TypeSessionStart   = "session.start"
	TypeTurnStart      = "turn.start"
	TypeTurnCancel     = "turn.cancel"
	TypeApprovalSolve  = "approval.resolve"
	TypeSessionClear   = "session.clear"
	TypeSessionClose   = "session.close"
	TypeDaemonStatus   = "daemon.status"
	TypeDaemonShutdown = "daemon.shutdown"
	// Daemon-socket extensions of SCV: reconcile the daemon's components
	// now, change a WeChat bridge account's settings, log one out. Each is
	// answered with daemon.status.
	TypeDaemonReload    = "daemon.reload"
	TypeClawbotSettings = "clawbot.settings"
	TypeClawbotLogout   = "clawbot.logout"
)

// Server → client event types.
const (
	EventInitialized       = "initialized"
	EventSessionStarted    = "session.started"
	EventSessionCleared    = "session.cleared"
	EventSessionClosed     = "session.closed"
	EventQueueEnqueued     = "queue.enqueued"
	EventTurnStarted       = "turn.started"
	EventAssistantDelta    = "assistant.delta"
	EventAssistantComplete = "assistant.completed"
	// EventAssistantReasoning carries a fragment of the model's reasoning
	// (thinking) text in Content. It is never part of the answer and never
	// repeated in assistant.completed; clients that do not know it ignore it.
	EventAssistantReasoning = "assistant.reasoning"
	EventToolProposed       = "tool.proposed"
	EventApprovalRequested  = "approval.requested"
	EventToolStarted        = "tool.started"
	EventToolProgress       = "tool.progress"
	EventToolCompleted      = "tool.completed"
	EventTurnCompleted      = "turn.completed"
	EventTurnCancelled      = "turn.cancelled"
	EventTurnFailed         = "turn.failed"
	EventContextCompacted   = "context.compacted"
	EventSessionTrimmed     = "session.trimmed"
	EventDaemonStatus       = "daemon.status"
	EventError              = "error"
)

// Request error codes.
const (
	ErrInvalidJSON      = "invalid_json"
	ErrNotInitialized   = "not_initialized"
	ErrVersionMismatch  = "version_mismatch"
	ErrInvalidRequest   = "invalid_request"
	ErrSessionNotFound  = "session_not_found"
	ErrTurnActive       = "turn_active"
	ErrTurnNotFound     = "turn_not_found"
	ErrApprovalNotFound = "approval_not_found"
	ErrUnsupported      = "unsupported"
	ErrInternal         = "internal_error"
	// ErrLimit refuses a request that would pass a server bound (queued
	// turns of a session, sessions of a connection or of the server); the
	// connection goes on. An SCV extension.
	ErrLimit = "limit_exceeded"
)

// turn.failed codes.
const (
	FailProvider = "provider_error"
	FailContext  = "context_limit"
	FailStep     = "step_limit"
	FailHistory  = "history_limit"
	FailResponse = "response_limit"
	FailTool     = "tool_limit"
	FailInternal = "internal_error"
)

// Envelope is the part every client message shares; decode it first, then
// the full message by Type.
type Envelope struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
}

// Peer names a client or server.
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Initialize opens a connection.
type Initialize struct {
	Envelope
	ProtocolVersion int  `json:"protocol_version"`
	Client          Peer `json:"client"`
}

// SessionStart opens a session.
type SessionStart struct {
	Envelope
	Cwd             string `json:"cwd"`
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	BaseURL         string `json:"base_url,omitempty"`
	NoTools         bool   `json:"no_tools,omitempty"`
	DelegationDepth int    `json:"delegation_depth,omitempty"`
}

// TurnStart submits a prompt.
type TurnStart struct {
	Envelope
	SessionID string `json:"session_id"`
	Prompt    string `json:"prompt"`
}

// TurnCancel cancels a running turn.
type TurnCancel struct {
	Envelope
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
}

// ApprovalResolve answers an approval request.
type ApprovalResolve struct {
	Envelope
	SessionID  string `json:"session_id"`
	ApprovalID string `json:"approval_id"`
	Approved   bool   `json:"approved"`
}

// SessionRef is session.clear and session.close.
type SessionRef struct {
	Envelope
	SessionID string `json:"session_id"`
}

// Event is every server → client line. Fields irrelevant to a type are
// omitted; Type decides which are meaningful.
type Event struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Seq       uint64 `json:"seq,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`

	// initialized
	ProtocolVersion int   `json:"protocol_version,omitempty"`
	Server          *Peer `json:"server,omitempty"`

	// session.started
	Cwd              string   `json:"cwd,omitempty"`
	Model            string   `json:"model,omitempty"`
	ContextMaxTokens int      `json:"context_max_tokens,omitempty"`
	Tools            []string `json:"tools,omitempty"`

	// queue.enqueued
	QueueID string `json:"queue_id,omitempty"`

	// assistant.delta / assistant.completed / assistant.reasoning
	Content *string `json:"content,omitempty"`

	// tool.*
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Text      string          `json:"text,omitempty"`
	Success   *bool           `json:"success,omitempty"`
	Output    *string         `json:"output,omitempty"`
	Truncated *bool           `json:"truncated,omitempty"`

	// approval.requested
	ApprovalID string `json:"approval_id,omitempty"`
	Risk       string `json:"risk,omitempty"`
	Summary    string `json:"summary,omitempty"`

	// turn.completed. ContextTokens is an SCV extension: the estimated size
	// (bytes per token plus 4 per message) of what the next request would send.
	Steps         *int   `json:"steps,omitempty"`
	Usage         *Usage `json:"usage,omitempty"`
	ContextTokens *int   `json:"context_tokens,omitempty"`

	// turn.failed / error: Code and Message; error also Fatal. tool.completed
	// carries its error kind in Error.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Fatal   *bool  `json:"fatal,omitempty"`
	Error   string `json:"error,omitempty"`

	// context.compacted
	BeforeTokens    *int `json:"before_tokens,omitempty"`
	AfterTokens     *int `json:"after_tokens,omitempty"`
	RemovedMessages *int `json:"removed_messages,omitempty"`
	// session.trimmed
	HistoryBytes *int `json:"history_bytes,omitempty"`

	// daemon.status
	Status *DaemonStatus `json:"status,omitempty"`
}

// Usage is token accounting of a turn. InputTokens counts every prompt
// token; CacheReadTokens of them came from the provider's prompt cache and
// CacheWriteTokens were written to it.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// ClawbotSettings changes the saved settings of a WeChat bridge account
// (clawbot.settings); omitted fields keep their saved values.
type ClawbotSettings struct {
	Envelope
	Account     string `json:"account"`
	Enabled     *bool  `json:"enabled,omitempty"`
	Workspace   string `json:"workspace,omitempty"`
	RemoteTools string `json:"remote_tools,omitempty"`
}

// ClawbotRef names a WeChat bridge account (clawbot.logout).
type ClawbotRef struct {
	Envelope
	Account string `json:"account"`
}

// DaemonStatus answers daemon.status.
type DaemonStatus struct {
	Version       string      `json:"version"`
	PID           int         `json:"pid"`
	UptimeSeconds int64       `json:"uptime_seconds"`
	Sessions      int         `json:"sessions"`
	Delegations   Delegations `json:"delegations"`
	// Clawbot lists the WeChat bridge accounts the daemon knows of.
	Clawbot []ClawbotAccount `json:"clawbot,omitempty"`
}

// ClawbotAccount is one WeChat bridge account in daemon.status.
type ClawbotAccount struct {
	Account     string `json:"account"`
	BotID       string `json:"bot_id,omitempty"`
	OwnerUserID string `json:"owner_user_id,omitempty"`
	// Enabled and Workspace are the saved settings; RemoteTools is what the
	// running bridge applies ("none" or "owner"; "none" when no bridge runs
	// or the owner is unknown).
	Enabled     bool   `json:"enabled"`
	Workspace   string `json:"workspace,omitempty"`
	RemoteTools string `json:"remote_tools"`
	// State is disabled, starting, connected, disconnected, backoff,
	// stopping, stopped or failed.
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	// LastError is a short sanitized description of the last failure.
	LastError string `json:"last_error,omitempty"`
	// LastPoll is when the last authenticated poll succeeded (RFC 3339).
	LastPoll string `json:"last_poll,omitempty"`
}

// Delegations counts delegated agent runs.
type Delegations struct {
	Running       int `json:"running"`
	OrphansReaped int `json:"orphans_reaped"`
}

// Ptr returns a pointer to v, for the optional event fields.
func Ptr[T any](v T) *T { return &v }
