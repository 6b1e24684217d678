package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Origin is the kind of client that created a session.
type Origin string

// Origins.
const (
	OriginTUI     Origin = "tui"
	OriginExec    Origin = "exec"
	OriginStdio   Origin = "stdio"
	OriginClawbot Origin = "clawbot"
	OriginACP     Origin = "acp"
)

func (o Origin) valid() bool {
	switch o {
	case OriginTUI, OriginExec, OriginStdio, OriginClawbot, OriginACP:
		return true
	}
	return false
}

// SessionState is where a session is in its life.
type SessionState string

// Session states. A session is open from its creation until a client closes
// it; a closed session can still be resumed (which opens it again).
const (
	SessionOpen   SessionState = "open"
	SessionClosed SessionState = "closed"
)

// TurnState is where a turn is in its life.
type TurnState string

// Turn states. Running is the only non-terminal one; interrupted means the
// process running the turn died before it ended.
const (
	TurnRunning     TurnState = "running"
	TurnCompleted   TurnState = "completed"
	TurnFailed      TurnState = "failed"
	TurnCancelled   TurnState = "cancelled"
	TurnInterrupted TurnState = "interrupted"
)

// Usage is token accounting of a turn (the fields of the protocol's usage
// object).
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// CostUSD is nil when the turn's model had no known price (for a
	// session's total: when none of its turns had one).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// Holder identifies a process that holds session leases. PID and Start
// (the process start time as the caller reads it, e.g. clock ticks since
// boot) tell a live process from a reused PID; Instance names the SCV home,
// and Name what the process is ("daemon", "scv exec", ...), for messages.
type Holder struct {
	Instance string `json:"instance"`
	PID      int    `json:"pid"`
	Start    int64  `json:"start"`
	Name     string `json:"name"`
}

func (h Holder) zero() bool { return h.PID == 0 && h.Start == 0 && h.Instance == "" }

// same reports whether h and o are the same process (Name is descriptive).
func (h Holder) same(o Holder) bool {
	return h.Instance == o.Instance && h.PID == o.PID && h.Start == o.Start
}

func (h Holder) String() string {
	name := h.Name
	if name == "" {
		name = "scv"
	}
	return fmt.Sprintf("%s (pid %d, %s)", name, h.PID, h.Instance)
}

// Session is a stored session's summary.
type Session struct {
	ID        string `json:"id"`
	Workspace string `json:"workspace"`
	Title     string `json:"title"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	// WireAPI and BaseURL are the endpoint the session runs with: the
	// provider's wire (responses, chat, anthropic) and its base URL; empty
	// for a session stored before they were recorded. No key is stored.
	WireAPI string       `json:"wire_api,omitempty"`
	BaseURL string       `json:"base_url,omitempty"`
	Origin  Origin       `json:"origin"`
	State   SessionState `json:"state"`
	// DelegationDepth is how deep in a chain of delegated SCV runs the
	// session was started (0 for a user's own session).
	DelegationDepth int `json:"delegation_depth,omitempty"`
	// ForkedFrom and ForkedAt name the session and turn a fork was made
	// from; the source may have been deleted since.
	ForkedFrom string    `json:"forked_from,omitempty"`
	ForkedAt   string    `json:"forked_at,omitempty"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	// Turns is the number of turns; Bytes what the session's events and
	// history take in the database (before SQLite's own overhead).
	Turns int   `json:"turns"`
	Bytes int64 `json:"bytes"`
	// Mode is the session's mode: "default" or "plan" (SetMode).
	Mode string `json:"mode"`
	// LastSeq is the highest event seq stored; a resumed session continues
	// numbering after it.
	LastSeq uint64 `json:"last_seq"`
	// Lease is the process the session is live in, nil when none; the
	// holder may have died since (see Acquire).
	Lease *Holder `json:"lease,omitempty"`
	// LeasedAt is when Lease was taken.
	LeasedAt time.Time `json:"leased_at"`
	// LastTurn is the state of the session's latest turn ("" with none)
	// and FirstPrompt its first turn's prompt (at most 200 bytes: what a
	// picker filters by besides the title); set by ListSessions.
	LastTurn    TurnState `json:"last_turn,omitempty"`
	FirstPrompt string    `json:"first_prompt,omitempty"`
}

// Event is one protocol event line of a turn, stored verbatim.
type Event struct {
	Seq  uint64          `json:"seq"`
	Data json.RawMessage `json:"data"`
}

// Turn is one stored turn.
type Turn struct {
	ID string `json:"id"`
	// N is the turn's ordinal in its session, from 1; it is the cursor of
	// paged loading.
	N            int       `json:"n"`
	Prompt       string    `json:"prompt"`
	Answer       string    `json:"answer,omitempty"`
	State        TurnState `json:"state"`
	ErrorCode    string    `json:"error_code,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	Usage        Usage     `json:"usage"`
	Started      time.Time `json:"started"`
	// Ended is zero while the turn runs.
	Ended  time.Time `json:"ended"`
	Events []Event   `json:"events,omitempty"`
	// Undone is when the turn's writes were undone (zero: never), and
	// Undid the files that undo put back, in the order the turn wrote
	// them (loaded with the events).
	Undone time.Time    `json:"undone,omitzero"`
	Undid  []UndoneFile `json:"undid,omitempty"`
	// Images are the input images of the prompt (loaded with the events).
	Images []Image `json:"images,omitempty"`
}

// Image is one input image of a turn's prompt as it was attached: the
// file's path, media type, size and SHA-256. The store never holds an
// image's bytes.
type Image struct {
	Path      string `json:"path"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
}

// UndoneFile is one file an undo put back: restored to what it held
// before the turn, or removed (the turn created it).
type UndoneFile struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed,omitempty"`
}

// ErrNotFound is returned (wrapped) for an unknown session or turn.
var ErrNotFound = errors.New("not found")

// BusyError is returned when a session is live in another process.
type BusyError struct {
	SessionID string
	Holder    Holder
	Since     time.Time
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("session %s is live in %s since %s; close it there first", e.SessionID, e.Holder, e.Since.Format(time.DateTime))
}

// StateError is returned when a turn is not in the state an operation
// needs, e.g. completing a turn that was marked interrupted meanwhile.
type StateError struct {
	SessionID, TurnID string
	State             TurnState
	Want              TurnState
}

func (e *StateError) Error() string {
	return fmt.Sprintf("turn %s of session %s is %s, not %s", e.TurnID, e.SessionID, e.State, e.Want)
}

// maxIDBytes bounds session and turn ids (they are UUIDs in practice).
const maxIDBytes = 128

func checkID(kind, id string) error {
	if id == "" {
		return fmt.Errorf("empty %s id", kind)
	}
	if len(id) > maxIDBytes {
		return fmt.Errorf("%s id of %d bytes is longer than %d", kind, len(id), maxIDBytes)
	}
	return nil
}

func ns(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.Unix(0, t)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
