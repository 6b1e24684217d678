// Package proto defines SCV's client protocol (docs/protocol.md):
// newline-delimited JSON messages, one Go type per client message and per
// server event, the codes and kinds they carry, and the protocol limits. It
// imports nothing internal, so clients (the TUI, scv exec, third-party
// tools) depend on it alone.
//
// Files: wire.go holds what every message and event shares (the envelope,
// the event headers, encoding and decoding by type); the other files hold
// one family each — connection.go (handshake, errors, daemon), session.go,
// turn.go, tool.go, clawbot.go (the daemon's WeChat bridge accounts) — with
// each request beside the events that answer it.
package proto

// Version is the protocol version a client names in initialize.
const Version = 1

// Frame limits (the defaults of the [protocol] configuration section);
// encoded JSON, newline excluded.
const (
	MaxClientFrameBytes = 1 << 20
	MaxServerFrameBytes = 8 << 20
	MaxPromptBytes      = 256 << 10
	// Writer queue bounds and the slow-client rule: a client whose queue
	// stays full for SlowClientSeconds is disconnected.
	MaxQueuedFrames    = 256
	MaxQueuedBytes     = 16 << 20
	SlowClientSeconds  = 3
	MaxProgressBytes   = 200
	ProgressIntervalMS = 500
)

// Request error codes: the code of an error event.
const (
	ErrInvalidJSON      = "invalid_json"
	ErrNotInitialized   = "not_initialized"
	ErrVersionMismatch  = "version_mismatch"
	ErrInvalidRequest   = "invalid_request"
	ErrSessionNotFound  = "session_not_found"
	ErrTurnActive       = "turn_active"
	ErrTurnNotFound     = "turn_not_found"
	ErrApprovalNotFound = "approval_not_found"
	// ErrGrantNotFound refuses approval.revoke of a grant the session does
	// not have. An SCV extension.
	ErrGrantNotFound = "grant_not_found"
	ErrUnsupported   = "unsupported"
	ErrInternal      = "internal_error"
	// ErrLimit refuses a request that would pass a server bound (queued
	// turns of a session, sessions of a connection or of the server); the
	// connection goes on. An SCV extension.
	ErrLimit = "limit_exceeded"
	// ErrSessionBusy refuses to resume or delete a stored session that is
	// open elsewhere: on another connection, or in another process; the
	// message names the holder. An SCV extension.
	ErrSessionBusy = "session_busy"
	// ErrStore says the session database could not be read or written;
	// nothing was changed. An SCV extension.
	ErrStore = "store_error"
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
	// FailStore ends a turn that could not be saved to the session
	// database; its history is not applied. An SCV extension.
	FailStore = "store_error"
	// FailPromptBlocked ends a turn whose prompt a user_prompt hook
	// blocked; the model never saw it. An SCV extension.
	FailPromptBlocked = "prompt_blocked"
)

// Tool error kinds: tool.completed.error of a failed call. They are the
// kinds of internal/tool's results, spelled here for clients.
const (
	ToolDenied           = "denied"
	ToolCancelled        = "cancelled"
	ToolInvalidArguments = "invalid_arguments"
	ToolUnavailable      = "unavailable"
	ToolLimit            = "limit"
	ToolUnknown          = "unknown_tool"
	ToolFailed           = "failed"
	// ToolSessionBusy: a delegated agent's conversation already has a
	// call running. An SCV extension.
	ToolSessionBusy = "session_busy"
)
