package proto

import (
	"encoding/json"
	"fmt"
)

// The session family: opening, clearing and closing a session.

const (
	TypeSessionStart = "session.start"
	TypeSessionClear = "session.clear"
	TypeSessionClose = "session.close"

	EventSessionStarted = "session.started"
	EventSessionCleared = "session.cleared"
	EventSessionClosed  = "session.closed"
)

// SessionStart opens a session in Cwd, an absolute existing directory.
type SessionStart struct {
	Envelope
	Cwd             string `json:"cwd"`
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	BaseURL         string `json:"base_url,omitempty"`
	NoTools         bool   `json:"no_tools,omitempty"`
	DelegationDepth int    `json:"delegation_depth,omitempty"`
	// Origin is the kind of client starting the session (one of the
	// Origin* values), stored with it; absent: stdio.
	Origin string `json:"origin,omitempty"`
	// ProviderKey is the client's value of ProviderKeyEnv, the variable
	// its provider profile takes the key from. The server uses it only
	// when the session's profile names the same variable and the server's
	// own environment lacks it. It is never logged, stored or echoed. An
	// SCV extension; send it over the daemon's 0600 socket only.
	ProviderKey    string `json:"provider_key,omitempty"`
	ProviderKeyEnv string `json:"provider_key_env,omitempty"`
	// ProviderKeyBaseURL is the base URL the client's key is for (its
	// own configuration's, with its overrides): the server sends the key
	// only to that origin (scheme, host and port), and a key sent without
	// it is not used. An SCV extension.
	ProviderKeyBaseURL string `json:"provider_key_base_url,omitempty"`
	// MCPServers are MCP servers the client adds to this session only (an
	// editor's, through scv acp), beside the configured ones. An SCV
	// extension.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// MCPServer is an MCP server a client adds to one session: a stdio
// server (Command, run in the session's workspace) or a streamable HTTP
// one (URL). Its tools run under the server's rules for MCP tools: risk
// process, bounded results, the server stopped when no session uses it.
type MCPServer struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// String keeps the key, and the values of the MCP servers' variables and
// headers, out of anything that prints the message.
func (m SessionStart) String() string {
	if m.ProviderKey != "" {
		m.ProviderKey = "[redacted]"
	}
	m.MCPServers = RedactMCPServers(m.MCPServers)
	type plain SessionStart
	return fmt.Sprintf("%+v", plain(m))
}

// RedactMCPServers is a copy of servers with every variable and header
// value replaced by "[redacted]".
func RedactMCPServers(servers []MCPServer) []MCPServer {
	out := make([]MCPServer, len(servers))
	for i, s := range servers {
		env, hdr := map[string]string{}, map[string]string{}
		for k := range s.Env {
			env[k] = "[redacted]"
		}
		for k := range s.Headers {
			hdr[k] = "[redacted]"
		}
		s.Env, s.Headers = env, hdr
		out[i] = s
	}
	return out
}

func (*SessionStart) MessageType() string { return TypeSessionStart }

// SessionStarted answers session.start. It is the session's first event and
// has seq 0; unlike the other session events it carries seq last. Tools is
// encoded as a list also when nil.
type SessionStarted struct {
	Header
	SessionID        string   `json:"session_id"`
	Cwd              string   `json:"cwd"`
	Model            string   `json:"model"`
	ContextMaxTokens int      `json:"context_max_tokens"`
	Tools            []string `json:"tools"`
	// MaxPromptBytes is the longest prompt the session takes when its
	// configuration changed it (session.max_prompt_bytes); absent:
	// MaxPromptBytes. An SCV extension.
	MaxPromptBytes int    `json:"max_prompt_bytes,omitempty"`
	Seq            uint64 `json:"seq"`
}

func (*SessionStarted) EventType() string { return EventSessionStarted }

// MarshalJSON encodes e with Tools as a list, never null.
func (e SessionStarted) MarshalJSON() ([]byte, error) {
	type plain SessionStarted // the same fields without this method
	e.Tools = nonNil(e.Tools)
	return json.Marshal(plain(e))
}

// SessionClear empties an idle session's history.
type SessionClear struct {
	Envelope
	SessionID string `json:"session_id"`
}

func (*SessionClear) MessageType() string { return TypeSessionClear }
func (m *SessionClear) Target() string    { return m.SessionID }

// SessionCleared answers session.clear.
type SessionCleared struct {
	SessionHeader
}

func (*SessionCleared) EventType() string { return EventSessionCleared }

// SessionClose ends a session: its active turn is cancelled and its queue
// dropped.
type SessionClose struct {
	Envelope
	SessionID string `json:"session_id"`
}

func (*SessionClose) MessageType() string { return TypeSessionClose }
func (m *SessionClose) Target() string    { return m.SessionID }

// SessionClosed answers session.close; it is the session's last event.
type SessionClosed struct {
	SessionHeader
}

func (*SessionClosed) EventType() string { return EventSessionClosed }
