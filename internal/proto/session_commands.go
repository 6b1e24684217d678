package proto

// Session commands: change the model of an open session, list the models
// its provider offers, and undo the file writes of its last writing turn.

const (
	TypeSessionConfigure = "session.configure"
	TypeModelsList       = "models.list"
	TypeSessionUndo      = "session.undo"

	EventSessionConfigured = "session.configured"
	EventModelsListed      = "models.listed"
	EventSessionUndone     = "session.undone"

	// ErrUndoRefused: session.undo refused (nothing to undo, a turn is
	// running, a file changed since the turn wrote it); the message says which.
	ErrUndoRefused = "undo_refused"
)

// SessionConfigure changes the model (and reasoning effort, where the
// provider's wire has it: "" keeps, "none"|"minimal"|"low"|"medium"|"high")
// used by the session's next turns; a running turn keeps its model. The
// stored session takes the new model (a resume uses it).
type SessionConfigure struct {
	Envelope
	SessionID       string `json:"session_id"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ApprovalPolicy changes the approval policy of the session's next
	// calls; one weaker than the configuration's is refused. Not stored.
	ApprovalPolicy string `json:"approval_policy,omitempty"`
	// Provider moves the session to another provider profile of the
	// server's configuration, with its wire and base URL, and Model or
	// else that profile's model. Stored like Model.
	Provider string `json:"provider,omitempty"`
}

// SessionConfigured answers session.configure (header: session).
type SessionConfigured struct {
	SessionHeader
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ContextMaxTokens is the context window of the new model.
	ContextMaxTokens int `json:"context_max_tokens"`
	// ApprovalPolicy is the session's policy now; present when the
	// message changed it.
	ApprovalPolicy string `json:"approval_policy,omitempty"`
	// Provider and BaseURL are the profile and endpoint of the next
	// turns, and PreviousBaseURL, present only when the message moved
	// the session to another base URL, the one before: clients show
	// "endpoint changed: PreviousBaseURL → BaseURL".
	Provider        string `json:"provider,omitempty"`
	BaseURL         string `json:"base_url,omitempty"`
	PreviousBaseURL string `json:"previous_base_url,omitempty"`
}

// ModelsList asks the session's provider for the models it offers
// (GET {base_url}/models on the OpenAI-compatible wires). Refused with
// unsupported when the provider cannot list them.
type ModelsList struct {
	Envelope
	SessionID string `json:"session_id"`
	// Provider asks another provider profile of the configuration
	// instead of the session's own (an SCV extension).
	Provider string `json:"provider,omitempty"`
}

// ModelsListed answers models.list (header: session).
type ModelsListed struct {
	SessionHeader
	Current string   `json:"current"`
	Models  []string `json:"models"`
	// Provider (an SCV extension) is the profile whose models these
	// are; Profiles, in the answer about the session's own profile,
	// every configured profile a session.configure with provider may
	// move the session to (the session's own first, as it runs it).
	Provider string    `json:"provider,omitempty"`
	Profiles []Profile `json:"profiles,omitempty"`
}

// Profile is one provider profile of the configuration: its endpoint and
// its configured model.
type Profile struct {
	Name    string `json:"name"`
	WireAPI string `json:"wire_api"`
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
}

// SessionUndo restores every file the session's last completed turn
// wrote with the write tool to its content before that turn, and removes
// the files that turn created. DryRun reports what would change without
// changing anything. Changes made through bash or delegated agents are not
// tracked.
type SessionUndo struct {
	Envelope
	SessionID string `json:"session_id"`
	DryRun    bool   `json:"dry_run,omitempty"`
}

// UndoFile is one file of an undo.
type UndoFile struct {
	Path   string `json:"path"`   // workspace-relative
	Action string `json:"action"` // "restore" | "remove"
	// Diff is the change the undo makes to the file (current → restored),
	// bounded like write approval diffs.
	Diff *Diff `json:"diff,omitempty"`
}

// SessionUndone answers session.undo (header: session).
type SessionUndone struct {
	SessionHeader
	TurnID string     `json:"turn_id"`
	DryRun bool       `json:"dry_run,omitempty"`
	Files  []UndoFile `json:"files"`
	// Note says what undo does not cover (bash, delegated agents).
	Note string `json:"note"`
}

// Undo actions of UndoFile.
const (
	UndoRestore = "restore"
	UndoRemove  = "remove"
)

// UndoNote is SessionUndone's note.
const UndoNote = "changes made through bash or delegated agents are not tracked"

func (*SessionConfigure) MessageType() string { return TypeSessionConfigure }
func (m *SessionConfigure) Target() string    { return m.SessionID }
func (*ModelsList) MessageType() string       { return TypeModelsList }
func (m *ModelsList) Target() string          { return m.SessionID }
func (*SessionUndo) MessageType() string      { return TypeSessionUndo }
func (m *SessionUndo) Target() string         { return m.SessionID }

func (*SessionConfigured) EventType() string { return EventSessionConfigured }
func (*ModelsListed) EventType() string      { return EventModelsListed }
func (*SessionUndone) EventType() string     { return EventSessionUndone }
