// Package model talks to OpenAI-compatible model endpoints: the Responses and
// Chat Completions wire APIs, both streamed and bounded by the provider
// limits. The agent loop sees only Client, Request, Response and Error.
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
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

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
	// HostedWebSearch offers the Responses API's {"type":"web_search"} tool.
	HostedWebSearch bool
	// ReasoningEffort is passed through when non-empty.
	ReasoningEffort string
}

// Usage is token accounting reported by the provider.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Response is one complete model answer.
type Response struct {
	// Content is the assistant text, including any appended "Sources:" list.
	Content   string
	ToolCalls []ToolCall
	Usage     *Usage
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

// Client streams one request. onDelta receives assistant text fragments as
// they arrive (never called after Stream returns). Errors are *Error.
type Client interface {
	Stream(ctx context.Context, req Request, onDelta func(text string)) (Response, error)
}
