package proto

import "encoding/json"

// The plan family: a session's mode (default or plan) and the todo list
// the model keeps with the todo_write tool (docs/runtime.md, "Plan mode"
// and "The todo list"). SCV extensions.

const (
	TypeSessionSetMode = "session.set_mode"

	EventSessionMode = "session.mode"
	EventTodoUpdated = "todo.updated"
)

// Session modes (SessionSetMode.Mode, SessionMode.Mode).
const (
	// ModeDefault runs calls under the session's approval policy.
	ModeDefault = "default"
	// ModePlan runs only read_only calls: every other call is refused
	// before approval, and the model is asked for a plan, not changes.
	ModePlan = "plan"
)

// Todo statuses (TodoItem.Status).
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Bounds of a todo list: items per list and bytes of one item's content.
const (
	MaxTodoItems     = 50
	MaxTodoItemBytes = 500
)

// SessionSetMode sets the mode of the session's next tool calls and model
// requests (a call already deciding keeps its mode). The stored session
// keeps the mode (a resume starts in it). Answered with session.mode.
type SessionSetMode struct {
	Envelope
	SessionID string `json:"session_id"`
	Mode      string `json:"mode"`
}

func (*SessionSetMode) MessageType() string { return TypeSessionSetMode }
func (m *SessionSetMode) Target() string    { return m.SessionID }

// SessionMode reports the session's mode: the answer to session.set_mode
// (with its request_id), and after session.resumed when the resumed
// session is not in the default mode.
type SessionMode struct {
	SessionHeader
	Mode string `json:"mode"`
}

func (*SessionMode) EventType() string { return EventSessionMode }

// TodoItem is one entry of a todo list.
type TodoItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// TodoUpdated carries the session's whole todo list after the model
// changed it (a todo_write call of the turn turn_id), after
// session.resumed when the resumed session has one (turn_id ""), and
// empty after session.clear. Items is encoded as a list, never null.
type TodoUpdated struct {
	TurnHeader
	Items []TodoItem `json:"items"`
}

func (*TodoUpdated) EventType() string { return EventTodoUpdated }

// MarshalJSON encodes e with Items as a list, never null.
func (e TodoUpdated) MarshalJSON() ([]byte, error) {
	type plain TodoUpdated
	e.Items = nonNil(e.Items)
	return json.Marshal(plain(e))
}
