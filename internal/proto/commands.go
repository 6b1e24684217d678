package proto

// Commands a client offers as /name: custom commands (Markdown prompt
// files of the user and of the session's workspace, listed by the server,
// which reads the workspace) and manual compaction. A custom command runs
// as turn.start with command and arguments in place of prompt.

const (
	TypeCommandsList   = "commands.list"
	TypeSessionCompact = "session.compact"

	EventCommandsListed   = "commands.listed"
	EventSessionCompacted = "session.compacted"

	// CommandUser and CommandWorkspace are a command's source: the user's
	// own directory, or the workspace's repository.
	CommandUser      = "user"
	CommandWorkspace = "workspace"

	// ErrCompactFailed: session.compact could not summarise the history
	// (the model failed or answered with no text); the history is as it
	// was. An SCV extension.
	ErrCompactFailed = "compact_failed"

	// MaxCompactFocusBytes bounds session.compact's focus.
	MaxCompactFocusBytes = 4 << 10
)

// CommandsList asks for the session's custom commands.
type CommandsList struct {
	Envelope
	SessionID string `json:"session_id"`
}

func (*CommandsList) MessageType() string { return TypeCommandsList }
func (m *CommandsList) Target() string    { return m.SessionID }

// CommandsListed answers commands.list (header: session).
type CommandsListed struct {
	SessionHeader
	Commands []CustomCommand `json:"commands"`
	// Skipped are the command files not offered, each with the reason.
	Skipped []SkippedCommand `json:"skipped,omitempty"`
}

func (*CommandsListed) EventType() string { return EventCommandsListed }

// CustomCommand is one custom command: Name without the slash, the
// description (the file's first line) and its source (CommandUser or
// CommandWorkspace).
type CustomCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
}

// SkippedCommand is a command file that is not offered.
type SkippedCommand struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// SessionCompact replaces an idle session's history with one summary the
// model writes (Focus, when given, says what the summary must keep). It
// is refused with turn_active while a turn runs or waits.
type SessionCompact struct {
	Envelope
	SessionID string `json:"session_id"`
	Focus     string `json:"focus,omitempty"`
}

func (*SessionCompact) MessageType() string { return TypeSessionCompact }
func (m *SessionCompact) Target() string    { return m.SessionID }

// SessionCompacted answers session.compact: the estimated tokens of the
// next request before and after, how many history messages the summary
// replaced, and the summarising request's usage when the provider
// reported it.
type SessionCompacted struct {
	SessionHeader
	BeforeTokens    int    `json:"before_tokens"`
	AfterTokens     int    `json:"after_tokens"`
	RemovedMessages int    `json:"removed_messages"`
	Usage           *Usage `json:"usage,omitempty"`
}

func (*SessionCompacted) EventType() string { return EventSessionCompacted }
