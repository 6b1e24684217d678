package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Envelope is the start of every client message; the server decodes it
// first, then the full message by Type.
type Envelope struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
}

// Env returns the envelope itself; embedding it gives a message this method.
func (e *Envelope) Env() *Envelope { return e }

// Message is a client → server message: a pointer to one of this package's
// request types (Initialize, SessionStart, TurnStart, …).
type Message interface {
	// MessageType is the wire type; EncodeMessage writes it into Type.
	MessageType() string
	// Env returns the message's envelope, to read or set its request_id.
	Env() *Envelope
}

// SessionMessage is a message that addresses one open session.
type SessionMessage interface {
	Message
	// Target is the session_id the message names.
	Target() string
}

// EncodeMessage sets m's type from its Go type and returns its JSON.
func EncodeMessage(m Message) ([]byte, error) {
	m.Env().Type = m.MessageType()
	return json.Marshal(m)
}

// Header is the start of every server event. request_id is present exactly
// on the events that answer a request.
type Header struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
}

// Head returns the header itself; embedding it gives an event this method.
func (h *Header) Head() *Header { return h }

// SessionHeader is the start of every event of one session: session_id and
// seq are always encoded. The server stamps both as it sends the event.
type SessionHeader struct {
	Header
	SessionID string `json:"session_id"`
	Seq       uint64 `json:"seq"`
}

// Session returns the session header itself (see Header.Head).
func (h *SessionHeader) Session() *SessionHeader { return h }

// TurnHeader is the start of every event of one turn: a session event that
// also names its turn. The agent stamps turn_id.
type TurnHeader struct {
	SessionHeader
	TurnID string `json:"turn_id"`
}

// Turn returns the turn header itself (see Header.Head).
func (h *TurnHeader) Turn() *TurnHeader { return h }

// Event is a server → client event: a pointer to one of this package's
// event types (Initialized, TurnStarted, ToolCompleted, …) or to Unknown.
type Event interface {
	// EventType is the wire type; EncodeEvent writes it into Type.
	EventType() string
	// Head returns the event's header, to read or set its request_id.
	Head() *Header
}

// SessionEvent is an event that belongs to a session and carries its
// session_id and seq.
type SessionEvent interface {
	Event
	Session() *SessionHeader
}

// TurnEvent is an event of a turn: a session event with a turn_id.
type TurnEvent interface {
	SessionEvent
	Turn() *TurnHeader
}

// EncodeEvent sets ev's type from its Go type and returns its JSON (one
// frame, without the newline).
func EncodeEvent(ev Event) ([]byte, error) {
	ev.Head().Type = ev.EventType()
	return json.Marshal(ev)
}

// DecodeEvent decodes one server frame: its type first, then the whole
// frame into that type's struct. A type this package does not know gives
// an *Unknown (clients ignore those) rather than an error.
func DecodeEvent(line []byte) (Event, error) {
	typ, ok := peekType(line)
	if !ok {
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return nil, fmt.Errorf("decode event: %w", err)
		}
		typ = h.Type
	}
	ev := NewEvent(typ)
	if ev == nil {
		u := &Unknown{Raw: bytes.Clone(line)}
		if err := json.Unmarshal(line, &u.Header); err != nil {
			return nil, fmt.Errorf("decode event: %w", err)
		}
		return u, nil
	}
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", typ, err)
	}
	return ev, nil
}

// peekType reads the type of a frame that starts with it, as SCV's server
// writes every frame, without decoding the rest; false sends the caller to
// the full decoder (another field order, or an escape in the name).
func peekType(line []byte) (string, bool) {
	const prefix = `{"type":"`
	rest, ok := bytes.CutPrefix(line, []byte(prefix))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// Unknown is an event of a type this package does not know (a newer
// server's): its header, and the frame as it came, which it encodes back to.
type Unknown struct {
	Header
	Raw json.RawMessage `json:"-"`
}

// EventType is the type the frame named.
func (u *Unknown) EventType() string { return u.Type }

// nonNil is s, or an empty slice when s is nil: a list field that is
// encoded as [] rather than null (the MarshalJSON methods).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON returns the frame as it came.
func (u *Unknown) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 {
		return json.Marshal(u.Header)
	}
	return u.Raw, nil
}

// NewMessage returns a new zero message of the wire type typ, or nil when
// typ is not a client message type. It is the server's decoding table.
func NewMessage(typ string) Message {
	switch typ {
	case TypeInitialize:
		return new(Initialize)
	case TypeSessionStart:
		return new(SessionStart)
	case TypeSessionClear:
		return new(SessionClear)
	case TypeSessionClose:
		return new(SessionClose)
	case TypeTurnStart:
		return new(TurnStart)
	case TypeTurnCancel:
		return new(TurnCancel)
	case TypeApprovalResolve:
		return new(ApprovalResolve)
	case TypeSessionList:
		return new(SessionList)
	case TypeSessionResume:
		return new(SessionResume)
	case TypeSessionFork:
		return new(SessionFork)
	case TypeSessionTurns:
		return new(SessionTurnsRequest)
	case TypeSessionRename:
		return new(SessionRename)
	case TypeSessionDelete:
		return new(SessionDelete)
	case TypeApprovalGrants:
		return new(ApprovalGrantsRequest)
	case TypeApprovalRevoke:
		return new(ApprovalRevoke)
	case TypeDaemonStatus:
		return new(DaemonStatusRequest)
	case TypeDaemonShutdown:
		return new(DaemonShutdown)
	case TypeDaemonReload:
		return new(DaemonReload)
	case TypeClawbotSettings:
		return new(ClawbotSettings)
	case TypeClawbotLogout:
		return new(ClawbotLogout)
	case TypeSessionConfigure:
		return new(SessionConfigure)
	case TypeModelsList:
		return new(ModelsList)
	case TypeSessionUndo:
		return new(SessionUndo)
	case TypeSessionSetMode:
		return new(SessionSetMode)
	case TypeCommandsList:
		return new(CommandsList)
	case TypeSessionCompact:
		return new(SessionCompact)
	}
	return nil
}

// MessageTypes lists every client message type NewMessage knows. Only
// tests call it, and it stays exported for them: proto's own check that
// the registries, the source and docs/protocol.md agree, and the TUI's
// walk of every message field it must make visible (a test of another
// package cannot reach an unexported name or an _test.go file here).
func MessageTypes() []string {
	return []string{
		TypeInitialize, TypeSessionStart, TypeSessionClear, TypeSessionClose,
		TypeTurnStart, TypeTurnCancel, TypeApprovalResolve, TypeApprovalGrants, TypeApprovalRevoke,
		TypeDaemonStatus, TypeDaemonShutdown,
		TypeDaemonReload, TypeClawbotSettings, TypeClawbotLogout,
		TypeSessionList, TypeSessionResume, TypeSessionFork, TypeSessionTurns, TypeSessionRename, TypeSessionDelete,
		TypeSessionConfigure, TypeModelsList, TypeSessionUndo,
		TypeSessionSetMode,
		TypeCommandsList, TypeSessionCompact,
	}
}

// NewEvent returns a new zero event of the wire type typ, or nil when typ
// is not an event type this package knows. It is the clients' decoding
// table.
func NewEvent(typ string) Event {
	switch typ {
	case EventInitialized:
		return new(Initialized)
	case EventError:
		return new(Error)
	case EventDaemonStatus:
		return new(DaemonStatusReply)
	case EventSessionStarted:
		return new(SessionStarted)
	case EventSessionCleared:
		return new(SessionCleared)
	case EventSessionClosed:
		return new(SessionClosed)
	case EventQueueEnqueued:
		return new(QueueEnqueued)
	case EventTurnStarted:
		return new(TurnStarted)
	case EventAssistantReasoning:
		return new(AssistantReasoning)
	case EventAssistantDelta:
		return new(AssistantDelta)
	case EventAssistantCompleted:
		return new(AssistantCompleted)
	case EventContextCompacted:
		return new(ContextCompacted)
	case EventSessionTrimmed:
		return new(SessionTrimmed)
	case EventTurnCompleted:
		return new(TurnCompleted)
	case EventTurnCancelled:
		return new(TurnCancelled)
	case EventTurnFailed:
		return new(TurnFailed)
	case EventToolProposed:
		return new(ToolProposed)
	case EventApprovalRequested:
		return new(ApprovalRequested)
	case EventToolStarted:
		return new(ToolStarted)
	case EventToolProgress:
		return new(ToolProgress)
	case EventToolCompleted:
		return new(ToolCompleted)
	case EventSessionListed:
		return new(SessionListed)
	case EventSessionResumed:
		return new(SessionResumed)
	case EventSessionTurns:
		return new(SessionTurnsReply)
	case EventSessionRenamed:
		return new(SessionRenamed)
	case EventSessionDeleted:
		return new(SessionDeleted)
	case EventApprovalGrants:
		return new(ApprovalGrantsReply)
	case EventSessionConfigured:
		return new(SessionConfigured)
	case EventModelsListed:
		return new(ModelsListed)
	case EventSessionUndone:
		return new(SessionUndone)
	case EventHookRan:
		return new(HookRan)
	case EventSessionMode:
		return new(SessionMode)
	case EventTodoUpdated:
		return new(TodoUpdated)
	case EventCommandsListed:
		return new(CommandsListed)
	case EventSessionCompacted:
		return new(SessionCompacted)
	case EventJobReported:
		return new(JobReported)
	}
	return nil
}

// EventTypes lists every event type NewEvent knows; exported for the
// tests of proto and internal/tui, as MessageTypes is.
func EventTypes() []string {
	return []string{
		EventInitialized, EventError, EventDaemonStatus,
		EventSessionStarted, EventSessionCleared, EventSessionClosed,
		EventQueueEnqueued, EventTurnStarted, EventAssistantReasoning, EventAssistantDelta,
		EventAssistantCompleted, EventContextCompacted, EventSessionTrimmed,
		EventTurnCompleted, EventTurnCancelled, EventTurnFailed,
		EventToolProposed, EventApprovalRequested, EventToolStarted, EventToolProgress, EventToolCompleted,
		EventSessionListed, EventSessionResumed, EventSessionTurns, EventSessionRenamed, EventSessionDeleted,
		EventApprovalGrants,
		EventSessionConfigured, EventModelsListed, EventSessionUndone,
		EventHookRan,
		EventSessionMode, EventTodoUpdated,
		EventCommandsListed, EventSessionCompacted,
		EventJobReported,
	}
}
