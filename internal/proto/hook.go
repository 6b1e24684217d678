package proto

// The hook family: one event per run of a user's hook command
// (docs/hooks.md).

const EventHookRan = "hook.ran"

// Hook outcomes (HookRan.Outcome).
const (
	HookOK      = "ok"
	HookDeny    = "deny"
	HookAsk     = "ask"
	HookBlock   = "block"
	HookContext = "context"
	HookNote    = "note"
	HookFailed  = "hook_failed"
)

// HookRan reports one run of a hook: which, for what, how long and what it
// decided. A hook of a turn's events (user_prompt, pre_tool, post_tool,
// approval_requested, turn_end) has the turn's turn_id. An SCV extension.
type HookRan struct {
	TurnHeader
	Hook  string `json:"hook"`
	Event string `json:"event"`
	// Tool and CallID name the call of a tool event.
	Tool       string `json:"tool,omitempty"`
	CallID     string `json:"call_id,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
	// Reason is the reason of a deny, ask or block, or what went wrong
	// (at most 2 KiB).
	Reason string `json:"reason,omitempty"`
	// Stderr is the end of a failed hook's standard error (at most 2 KiB).
	Stderr   string `json:"stderr,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

func (*HookRan) EventType() string { return EventHookRan }
