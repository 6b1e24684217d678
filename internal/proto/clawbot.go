package proto

// The WeChat bridge family: requests on the daemon socket that change a
// bridge account and log one out, and the account's entry in daemon.status.
// Each request is answered by daemon.status with Status once done. SCV
// extensions.

const (
	TypeClawbotSettings = "clawbot.settings"
	TypeClawbotLogout   = "clawbot.logout"
)

// ClawbotSettings changes the saved settings of a WeChat bridge account
// and reconciles its bridge; omitted fields keep their saved values.
type ClawbotSettings struct {
	Envelope
	Account     string `json:"account"`
	Enabled     *bool  `json:"enabled,omitempty"`
	Workspace   string `json:"workspace,omitempty"`
	RemoteTools string `json:"remote_tools,omitempty"`
}

func (*ClawbotSettings) MessageType() string { return TypeClawbotSettings }

// ClawbotLogout disables a WeChat bridge account, stops its bridge and
// deletes its state.
type ClawbotLogout struct {
	Envelope
	Account string `json:"account"`
}

func (*ClawbotLogout) MessageType() string { return TypeClawbotLogout }

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
