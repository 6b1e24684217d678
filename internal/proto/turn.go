package proto

// The turn family: a prompt, the model's answer as it streams, the history
// changes it causes, and the turn's one terminal event (turn.completed,
// turn.cancelled or turn.failed). The tool calls of a turn are in tool.go.

const (
	TypeTurnStart  = "turn.start"
	TypeTurnCancel = "turn.cancel"

	EventQueueEnqueued      = "queue.enqueued"
	EventTurnStarted        = "turn.started"
	EventAssistantReasoning = "assistant.reasoning"
	EventAssistantDelta     = "assistant.delta"
	EventAssistantCompleted = "assistant.completed"
	EventContextCompacted   = "context.compacted"
	EventSessionTrimmed     = "session.trimmed"
	EventTurnCompleted      = "turn.completed"
	EventTurnCancelled      = "turn.cancelled"
	EventTurnFailed         = "turn.failed"
)

// TurnStart submits a prompt (not empty, at most MaxPromptBytes). It runs
// at once, or waits behind the session's active turn. Images are input
// images sent with the prompt (an SCV extension). Command, instead of a
// prompt, names a custom command (commands.list) whose text, with
// Arguments in place of $ARGUMENTS, is the prompt.
type TurnStart struct {
	Envelope
	SessionID string  `json:"session_id"`
	Prompt    string  `json:"prompt"`
	Images    []Image `json:"images,omitempty"`
	Command   string  `json:"command,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
}

// Image is an input image of a prompt, kept by path and hash. In
// turn.start only Path is read: the file, absolute or relative to the
// session's workspace, which the server reads and checks (PNG, JPEG, GIF
// or WebP by content, at most 8 MiB). A stored turn gives all fields, as
// the file was when it was attached.
type Image struct {
	Path      string `json:"path"`
	MediaType string `json:"media_type,omitempty"`
	Size      int64  `json:"size,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
}

func (*TurnStart) MessageType() string { return TypeTurnStart }
func (m *TurnStart) Target() string    { return m.SessionID }

// TurnCancel cancels the active turn, or removes a queued one.
type TurnCancel struct {
	Envelope
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
}

func (*TurnCancel) MessageType() string { return TypeTurnCancel }
func (m *TurnCancel) Target() string    { return m.SessionID }

// QueueEnqueued answers a turn.start that waits behind another turn.
// QueueID is the turn_id the turn will have.
type QueueEnqueued struct {
	SessionHeader
	QueueID string `json:"queue_id"`
}

func (*QueueEnqueued) EventType() string { return EventQueueEnqueued }

// TurnStarted is a turn's first event; it echoes the request_id of its
// turn.start, also when the turn had been queued. Mentions (an SCV
// extension) are the prompt's `@path` mentions: what was attached for the
// model and what was refused, for a client to show as chips.
type TurnStarted struct {
	TurnHeader
	Mentions []Mention `json:"mentions,omitempty"`
}

// Mention kinds.
const (
	MentionFile  = "file"
	MentionDir   = "dir"
	MentionImage = "image" // an image file, sent as an input image of the prompt
)

// Mention is one `@path` of a prompt. Path is workspace-relative (a
// directory's ends in "/"); Bytes is how much content (or listing) was
// attached (an image's whole size), Truncated whether that is less than the whole; Refused, when
// set, says why nothing was attached.
type Mention struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	Bytes     int64  `json:"bytes,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Refused   string `json:"refused,omitempty"`
}

func (*TurnStarted) EventType() string { return EventTurnStarted }

// AssistantReasoning is a fragment of the model's reasoning (thinking) text,
// in order. It is never part of the answer and never repeated in
// assistant.completed; clients that do not know it ignore it. An SCV
// extension.
type AssistantReasoning struct {
	TurnHeader
	Content string `json:"content"`
}

func (*AssistantReasoning) EventType() string { return EventAssistantReasoning }

// AssistantDelta is a fragment of the answer text, in order.
type AssistantDelta struct {
	TurnHeader
	Content string `json:"content"`
}

func (*AssistantDelta) EventType() string { return EventAssistantDelta }

// AssistantCompleted is the whole text of one model response (empty when
// the response only calls tools).
type AssistantCompleted struct {
	TurnHeader
	Content string `json:"content"`
}

func (*AssistantCompleted) EventType() string { return EventAssistantCompleted }

// ContextCompacted reports that older history was summarised to fit the
// context window.
type ContextCompacted struct {
	TurnHeader
	BeforeTokens    int `json:"before_tokens"`
	AfterTokens     int `json:"after_tokens"`
	RemovedMessages int `json:"removed_messages"`
}

func (*ContextCompacted) EventType() string { return EventContextCompacted }

// SessionTrimmed reports that the oldest history was dropped to stay within
// the session's history bounds.
type SessionTrimmed struct {
	TurnHeader
	RemovedMessages int `json:"removed_messages"`
	HistoryBytes    int `json:"history_bytes"`
}

func (*SessionTrimmed) EventType() string { return EventSessionTrimmed }

// TurnCompleted ends a turn that answered. Usage is present when the
// provider reported any. ContextTokens (an SCV extension) estimates what
// the next request would send: bytes per token plus 4 per message, over
// the system prompt, tool schemas and history.
type TurnCompleted struct {
	TurnHeader
	Steps         int    `json:"steps"`
	Usage         *Usage `json:"usage,omitempty"`
	ContextTokens int    `json:"context_tokens"`
	// NotStored says a server that keeps sessions could not save this
	// turn (its session database is gone): the turn is part of the
	// session in memory only. An SCV extension.
	NotStored bool `json:"not_stored,omitempty"`
}

func (*TurnCompleted) EventType() string { return EventTurnCompleted }

// Usage is token accounting of a turn, summed over its model requests.
// InputTokens counts every prompt token; CacheReadTokens of them came from
// the provider's prompt cache and CacheWriteTokens were written to it (SCV
// extensions, omitted when zero). CostUSD (an SCV extension) is what the
// tokens cost in US dollars at the model's catalogued or configured
// prices, rounded to a millionth; absent when the model has no known
// price.
type Usage struct {
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	TotalTokens      int64    `json:"total_tokens"`
	CacheReadTokens  int64    `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64    `json:"cache_write_tokens,omitempty"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

// TurnCancelled ends a cancelled turn; for a queued turn it answers the
// turn.cancel (with its request_id).
type TurnCancelled struct {
	TurnHeader
}

func (*TurnCancelled) EventType() string { return EventTurnCancelled }

// TurnFailed ends a turn that failed; Code is one of the Fail* codes.
type TurnFailed struct {
	TurnHeader
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (*TurnFailed) EventType() string { return EventTurnFailed }
