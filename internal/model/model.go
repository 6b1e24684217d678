// Package model talks to model endpoints over three wire APIs: OpenAI
// Responses, OpenAI Chat Completions and Anthropic Messages. Each wire has
// its own stream parser that reads an event's type first and decodes only
// the fields that type needs; everything else is ignored. All three share
// one bounded SSE core (framing, limits, retries, redaction). The agent loop
// sees only Client, Request, Response, Delta and Error.
package model

import (
	"context"
	"encoding/json"
)

// Role of a history message.
type Role string

// History roles.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Message is one entry of the model-visible history.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Thinking are the signed thinking blocks of an assistant message
	// (Anthropic wire only). They are replayed while the tool loop of the
	// turn that produced them runs, and never on any other wire.
	Thinking []Thinking `json:"thinking,omitempty"`
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Images are the input images of a user message, sent after its text
	// (before it on the Anthropic wire, as Anthropic advises).
	Images []Image `json:"images,omitempty"`
}

// Image is one input image of a user message. The history keeps it by
// Path, SHA256, MediaType and Size; Data, its bytes, is never encoded
// with the message (a stored history holds no image bytes) and is what
// the wires send, base64-encoded.
type Image struct {
	Path      string `json:"path"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
	Data      []byte `json:"-"`
}

// sendable reports whether the image has bytes to send; an image without
// them (a history that was not hydrated) is left out of the request.
func (im Image) sendable() bool { return len(im.Data) > 0 && im.MediaType != "" }

// hasImages reports whether any message of req carries an image to send.
func (req Request) hasImages() bool {
	for _, m := range req.Messages {
		for _, im := range m.Images {
			if im.sendable() {
				return true
			}
		}
	}
	return false
}

// Thinking is one Anthropic thinking block as the provider sent it: either
// Text with its Signature, or the opaque Redacted data of a
// redacted_thinking block.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// Size is the number of bytes the block adds to a history message.
func (t Thinking) Size() int { return len(t.Text) + len(t.Signature) + len(t.Redacted) }

// ToolCall is one function call requested by the model. Arguments is the
// JSON text as the model produced it (validated as JSON by the client).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a function tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model request.
type Request struct {
	Model string
	// Instructions is the system prompt.
	Instructions string
	Messages     []Message
	Tools        []ToolSpec
	// HostedWebSearch offers the provider's own web search tool (Responses
	// and Anthropic wires).
	HostedWebSearch bool
	// ReasoningEffort is passed through when non-empty.
	ReasoningEffort string
	// MaxOutputTokens is the answer budget the Anthropic wire must send
	// (0: 8192); thinking tokens are added on top. Other wires leave the
	// provider's default.
	MaxOutputTokens int
	// Cache, when set, keeps the history's encoding between the requests
	// of one session; the body is byte-identical either way.
	Cache *HistoryCache
}

// Usage is token accounting reported by the provider: its final figure for
// the response. InputTokens counts every prompt token, cached or not.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	// CacheReadTokens are prompt tokens served from the provider's cache;
	// CacheWriteTokens were written to it (Anthropic prompt caching).
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Response is one complete model answer.
type Response struct {
	// Content is the answer text, including any appended "Sources:" list.
	// Reasoning text is never part of it.
	Content   string
	ToolCalls []ToolCall
	// Thinking are the signed thinking blocks the Anthropic wire needs back
	// while the tool loop goes on; nil on the other wires.
	Thinking []Thinking
	Usage    *Usage
}

// DeltaKind says what a streamed fragment is.
type DeltaKind int

// Kinds of Delta.
const (
	// DeltaText is answer text; the fragments add up to Response.Content.
	DeltaText DeltaKind = iota
	// DeltaReasoning is reasoning or thinking text: shown to the user,
	// never part of the answer.
	DeltaReasoning
)

// Delta is one streamed fragment.
type Delta struct {
	Kind DeltaKind
	Text string
}

// Error codes of a failed request; they map onto turn.failed codes.
const (
	CodeProvider = "provider_error"
	CodeResponse = "response_limit"
	CodeTool     = "tool_limit"
)

// Error is a failed model request. Message is one line, at most 300 bytes,
// with any key redacted.
type Error struct {
	Code    string
	Message string
	// HTTPStatus is the provider's status code when it answered with one.
	HTTPStatus int
	cause      error
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Client streams one request. onDelta receives answer and reasoning
// fragments as they arrive (never after Stream returns; nil is allowed).
// Errors are *Error.
type Client interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}
