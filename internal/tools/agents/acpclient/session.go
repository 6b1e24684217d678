package acpclient

import (
	"context"
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the ACP version SCV speaks.
const ProtocolVersion = 1

// Update is one session/update: what the agent is doing.
type Update struct {
	// Kind is sessionUpdate: agent_message_chunk, agent_thought_chunk,
	// tool_call, tool_call_update, plan, usage_update, ….
	Kind    string   `json:"sessionUpdate"`
	Content *Content `json:"content,omitempty"`
	ToolCall
	// Used and Size are a usage_update's context figures.
	Used int64 `json:"used,omitempty"`
	Size int64 `json:"size,omitempty"`
}

// Content is a content block; only text is read.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// ToolCall is a tool_call or tool_call_update, or the subject of a
// permission request.
type ToolCall struct {
	ToolCallID string          `json:"toolCallId,omitempty"`
	Title      string          `json:"title,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Status     string          `json:"status,omitempty"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations,omitempty"`
}

// PermissionOption is one choice a permission request offers.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string `json:"kind"`
}

// PermissionRequest is the agent's session/request_permission.
type PermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCall           `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// Option returns the id of the first option of one of kinds, or "".
func (r PermissionRequest) Option(kinds ...string) string {
	for _, k := range kinds {
		for _, o := range r.Options {
			if o.Kind == k {
				return o.OptionID
			}
		}
	}
	return ""
}

// AgentInfo is what initialize told about the agent.
type AgentInfo struct {
	ProtocolVersion   int `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession bool `json:"loadSession"`
	} `json:"agentCapabilities"`
	AgentInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo,omitempty"`
	AuthMethods []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"authMethods,omitempty"`
}

// Initialize negotiates protocol version 1 and offers no file system and
// no terminal.
func (c *Conn) Initialize(ctx context.Context, version string) (AgentInfo, error) {
	var info AgentInfo
	err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "scv", "version": version},
	}, &info)
	if err != nil {
		return info, err
	}
	if info.ProtocolVersion != ProtocolVersion {
		return info, fmt.Errorf("the agent speaks ACP version %d, SCV speaks %d", info.ProtocolVersion, ProtocolVersion)
	}
	return info, nil
}

// NewSession opens a session working in cwd (absolute) and returns its id.
func (c *Conn) NewSession(ctx context.Context, cwd string) (string, error) {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &r); err != nil {
		return "", err
	}
	if r.SessionID == "" {
		return "", fmt.Errorf("session/new: the agent returned no session id")
	}
	return r.SessionID, nil
}

// LoadSession reopens an earlier session (the agent replays it as
// updates, which the caller should ignore).
func (c *Conn) LoadSession(ctx context.Context, id, cwd string) error {
	return c.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil)
}

// Usage is a prompt's token usage when the agent reports it.
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
	CachedReadTokens  int64 `json:"cachedReadTokens"`
	CachedWriteTokens int64 `json:"cachedWriteTokens"`
}

// PromptResult is how a prompt turn ended.
type PromptResult struct {
	// StopReason is end_turn, max_tokens, max_turn_requests, refusal or
	// cancelled.
	StopReason string `json:"stopReason"`
	Usage      *Usage `json:"usage,omitempty"`
}

// Prompt sends one user message and waits for the turn to end. The
// agent's updates arrive at the Handler meanwhile.
func (c *Conn) Prompt(ctx context.Context, sessionID, text string) (PromptResult, error) {
	var r PromptResult
	err := c.Call(ctx, "session/prompt", map[string]any{
		"sessionId": sessionID,
		"prompt":    []Content{{Type: "text", Text: text}},
	}, &r)
	return r, err
}

// Cancel asks the agent to stop the session's running turn.
func (c *Conn) Cancel(sessionID string) error {
	return c.Notify("session/cancel", map[string]string{"sessionId": sessionID})
}
