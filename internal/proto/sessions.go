package proto

import (
	"encoding/json"
	"fmt"
)

// The stored-session family: listing, resuming, forking, paging, renaming
// and deleting the sessions a server keeps in its database. None of these
// messages addresses a session open on the connection (they have no
// Target): they name stored sessions, which may be closed or live
// elsewhere. Their answers have the basic header; session.resumed opens the
// session on the connection, like session.started.

const (
	TypeSessionList   = "session.list"
	TypeSessionResume = "session.resume"
	TypeSessionFork   = "session.fork"
	TypeSessionTurns  = "session.turns"
	TypeSessionRename = "session.rename"
	TypeSessionDelete = "session.delete"

	EventSessionListed  = "session.listed"
	EventSessionResumed = "session.resumed"
	EventSessionTurns   = "session.turns"
	EventSessionRenamed = "session.renamed"
	EventSessionDeleted = "session.deleted"
)

// Origins: the kind of client that started a session (session.start's
// origin, a stored session's origin).
const (
	OriginTUI     = "tui"
	OriginExec    = "exec"
	OriginStdio   = "stdio"
	OriginClawbot = "clawbot"
	// OriginACP: an editor through scv acp.
	OriginACP = "acp"
)

// Stored turn states (a stored turn's state).
const (
	TurnStateRunning     = "running"
	TurnStateCompleted   = "completed"
	TurnStateFailed      = "failed"
	TurnStateCancelled   = "cancelled"
	TurnStateInterrupted = "interrupted"
)

// Bounds of the stored-session messages.
const (
	// DefaultListLimit and MaxListLimit bound session.list's page.
	DefaultListLimit = 50
	MaxListLimit     = 500
	// DefaultResumeTurns and MaxResumeTurns bound the turns that
	// session.resumed (and session.turns) carry.
	DefaultResumeTurns = 50
	MaxResumeTurns     = 1000
	// MaxTitleBytes bounds a title given to session.rename.
	MaxTitleBytes = 200
)

// StoredSession summarises one stored session (session.listed).
type StoredSession struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Cwd       string `json:"cwd"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	Origin    string `json:"origin"`
	State     string `json:"state"`
	Created   string `json:"created"`
	Updated   string `json:"updated"`
	Turns     int    `json:"turns"`
	Bytes     int64  `json:"bytes"`
	// ForkedFrom and ForkedAt name the session and turn a fork was made
	// from.
	ForkedFrom string `json:"forked_from,omitempty"`
	ForkedAt   string `json:"forked_at,omitempty"`
	// LiveIn names the running process the session is open in, if any.
	LiveIn string `json:"live_in,omitempty"`
	// LastTurn (an SCV extension) is the state of its latest turn
	// (completed, failed, cancelled, interrupted, running); absent with
	// no turn.
	LastTurn string `json:"last_turn,omitempty"`
	// FirstPrompt (an SCV extension) is the start of its first prompt
	// (at most 200 bytes) when the title is another text (renamed).
	FirstPrompt string `json:"first_prompt,omitempty"`
}

// StoredTurn is one stored turn: its prompt, outcome and the events it
// sent, verbatim, so a client redraws it as it was shown live.
type StoredTurn struct {
	TurnID       string `json:"turn_id"`
	N            int    `json:"n"`
	Prompt       string `json:"prompt"`
	State        string `json:"state"`
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`
	Started      string `json:"started"`
	Ended        string `json:"ended,omitempty"`
	// Events are the turn's event lines as they were sent (tool.progress
	// excepted). Encoded as a list also when nil.
	Events []json.RawMessage `json:"events"`
	// EventsOmitted says the events were left out because the turn alone
	// does not fit a server frame.
	EventsOmitted bool `json:"events_omitted,omitempty"`
	// Undone (an SCV extension) says the turn's writes were undone
	// (session.undo): when, and the files that put back.
	Undone *StoredUndo `json:"undone,omitempty"`
	// Images (an SCV extension) are the input images of the prompt.
	Images []Image `json:"images,omitempty"`
}

// StoredUndo is the undo of a stored turn's writes: At (RFC 3339) and
// the files, with their actions (UndoRestore, UndoRemove; no diffs).
type StoredUndo struct {
	At    string     `json:"at"`
	Files []UndoFile `json:"files"`
}

// MarshalJSON encodes t with Events as a list, never null.
func (t StoredTurn) MarshalJSON() ([]byte, error) {
	type plain StoredTurn
	t.Events = nonNil(t.Events)
	return json.Marshal(plain(t))
}

// SessionList asks for stored sessions, most recently updated first.
type SessionList struct {
	Envelope
	Workspace string `json:"workspace,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	Before    string `json:"before,omitempty"`
	// All (an SCV extension) lists the sessions that failed before any
	// answer too; they are left out otherwise.
	All bool `json:"all,omitempty"`
}

func (*SessionList) MessageType() string { return TypeSessionList }

// SessionListed answers session.list. Sessions is encoded as a list also
// when nil; Next, when present, is the before of the following page.
type SessionListed struct {
	Header
	Sessions []StoredSession `json:"sessions"`
	Next     string          `json:"next,omitempty"`
}

func (*SessionListed) EventType() string { return EventSessionListed }

// MarshalJSON encodes e with Sessions as a list, never null.
func (e SessionListed) MarshalJSON() ([]byte, error) {
	type plain SessionListed
	e.Sessions = nonNil(e.Sessions)
	return json.Marshal(plain(e))
}

// SessionResume opens a stored session on this connection.
type SessionResume struct {
	Envelope
	SessionID string `json:"session_id"`
	MaxTurns  int    `json:"max_turns,omitempty"`
	// NoTools opens the session without tools, as session.start's
	// no_tools does (the WeChat bridge resumes a remote sender's session
	// so); it is not stored, so every resume says it again.
	NoTools bool `json:"no_tools,omitempty"`
	// Provider, Model and BaseURL are the client's explicit overrides
	// (its flags and SCV_* variables); absent, the session keeps the
	// endpoint it was stored with. SCV extensions.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"base_url,omitempty"`
	// ProviderKey, ProviderKeyEnv and ProviderKeyBaseURL are
	// session.start's: the client's key, never logged, stored or echoed,
	// and the base URL it is for.
	ProviderKey        string `json:"provider_key,omitempty"`
	ProviderKeyEnv     string `json:"provider_key_env,omitempty"`
	ProviderKeyBaseURL string `json:"provider_key_base_url,omitempty"`
	// MCPServers are session.start's: servers the client adds to the
	// reopened session; not stored, so every resume names them again.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

func (*SessionResume) MessageType() string { return TypeSessionResume }

// String keeps the key and the MCP servers' values out of anything that
// prints the message.
func (m SessionResume) String() string {
	if m.ProviderKey != "" {
		m.ProviderKey = "[redacted]"
	}
	m.MCPServers = RedactMCPServers(m.MCPServers)
	type plain SessionResume
	return fmt.Sprintf("%+v", plain(m))
}

// SessionFork creates a new session from a stored one, holding its turns
// before TurnID and the history as it was just before that turn, and
// opens it on this connection.
type SessionFork struct {
	Envelope
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
	Origin    string `json:"origin,omitempty"`
	MaxTurns  int    `json:"max_turns,omitempty"`
	// NoTools opens the fork without tools, as in session.resume.
	NoTools bool `json:"no_tools,omitempty"`
	// Provider, Model, BaseURL and the key fields are session.resume's.
	Provider           string `json:"provider,omitempty"`
	Model              string `json:"model,omitempty"`
	BaseURL            string `json:"base_url,omitempty"`
	ProviderKey        string `json:"provider_key,omitempty"`
	ProviderKeyEnv     string `json:"provider_key_env,omitempty"`
	ProviderKeyBaseURL string `json:"provider_key_base_url,omitempty"`
}

// String keeps the key out of anything that prints the message.
func (m SessionFork) String() string {
	if m.ProviderKey != "" {
		m.ProviderKey = "[redacted]"
	}
	type plain SessionFork
	return fmt.Sprintf("%+v", plain(m))
}

func (*SessionFork) MessageType() string { return TypeSessionFork }

// SessionResumed answers session.resume and session.fork: the session is
// open on the connection from now on, and its later events continue after
// Seq. Turns are its last turns, oldest first; Before, when present, is the
// n of the oldest of them: session.turns with it pages further back. Tools
// and Turns are encoded as lists also when nil.
type SessionResumed struct {
	Header
	SessionID        string       `json:"session_id"`
	Cwd              string       `json:"cwd"`
	Model            string       `json:"model"`
	ContextMaxTokens int          `json:"context_max_tokens"`
	Tools            []string     `json:"tools"`
	Title            string       `json:"title"`
	Origin           string       `json:"origin"`
	ForkedFrom       string       `json:"forked_from,omitempty"`
	ForkedAt         string       `json:"forked_at,omitempty"`
	Turns            []StoredTurn `json:"turns"`
	Before           int          `json:"before,omitempty"`
	// MaxPromptBytes is as in session.started.
	MaxPromptBytes int `json:"max_prompt_bytes,omitempty"`
	// BaseURL is the endpoint the session runs with from now on;
	// PreviousBaseURL, present only when it differs, the one it was
	// stored with (the client's override moved it): clients show
	// "endpoint changed: PreviousBaseURL → BaseURL". SCV extensions.
	BaseURL         string `json:"base_url,omitempty"`
	PreviousBaseURL string `json:"previous_base_url,omitempty"`
	// Mode is the session's stored mode when it is not ModeDefault, and
	// Todos its latest todo list when it has one. SCV extensions.
	Mode  string     `json:"mode,omitempty"`
	Todos []TodoItem `json:"todos,omitempty"`
	// Usage (an SCV extension) is the sum over all the session's stored
	// turns, those not sent included; its CostUSD sums the turns that had
	// a price. Absent when no turn reported usage.
	Usage *Usage `json:"usage,omitempty"`
	Seq   uint64 `json:"seq"`
}

func (*SessionResumed) EventType() string { return EventSessionResumed }

// MarshalJSON encodes e with Tools and Turns as lists, never null.
func (e SessionResumed) MarshalJSON() ([]byte, error) {
	type plain SessionResumed
	e.Tools = nonNil(e.Tools)
	e.Turns = nonNil(e.Turns)
	return json.Marshal(plain(e))
}

// Started is the session.started a client would have seen for the resumed
// session (what a client shows in its header).
func (e *SessionResumed) Started() SessionStarted {
	return SessionStarted{SessionID: e.SessionID, Cwd: e.Cwd, Model: e.Model, ContextMaxTokens: e.ContextMaxTokens, Tools: e.Tools,
		MaxPromptBytes: e.MaxPromptBytes}
}

// SessionTurnsRequest asks for a stored session's turns before the turn
// numbered Before (all when 0), at most Limit of them.
type SessionTurnsRequest struct {
	Envelope
	SessionID string `json:"session_id"`
	Before    int    `json:"before,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

func (*SessionTurnsRequest) MessageType() string { return TypeSessionTurns }

// SessionTurnsReply answers session.turns: the turns, oldest first, and
// the before of the page further back (absent at the first turn). Turns is
// encoded as a list also when nil.
type SessionTurnsReply struct {
	Header
	SessionID string       `json:"session_id"`
	Turns     []StoredTurn `json:"turns"`
	Before    int          `json:"before,omitempty"`
}

func (*SessionTurnsReply) EventType() string { return EventSessionTurns }

// MarshalJSON encodes e with Turns as a list, never null.
func (e SessionTurnsReply) MarshalJSON() ([]byte, error) {
	type plain SessionTurnsReply
	e.Turns = nonNil(e.Turns)
	return json.Marshal(plain(e))
}

// SessionRename sets a stored session's title.
type SessionRename struct {
	Envelope
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

func (*SessionRename) MessageType() string { return TypeSessionRename }

// SessionRenamed answers session.rename with the title as stored.
type SessionRenamed struct {
	Header
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

func (*SessionRenamed) EventType() string { return EventSessionRenamed }

// SessionDelete removes a stored session that is open nowhere.
type SessionDelete struct {
	Envelope
	SessionID string `json:"session_id"`
}

func (*SessionDelete) MessageType() string { return TypeSessionDelete }

// SessionDeleted answers session.delete.
type SessionDeleted struct {
	Header
	SessionID string `json:"session_id"`
}

func (*SessionDeleted) EventType() string { return EventSessionDeleted }
