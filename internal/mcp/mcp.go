// Package mcp makes the tools of MCP servers SCV tools, under the same
// contract as the built-in ones: input validated against the server's schema
// before any risk or approval decision, a risk per call from the user's
// configuration (never lowered by the server's own hints), an approval
// summary, output bounded to the call's limit, cancellation that notifies the
// server and returns at once.
//
// It owns the servers' lifecycle too. A Manager runs one server per
// (server, workspace), started when a session first needs its tools and
// shared by that workspace's sessions through Leases; a stdio server leads
// its own process group (internal/proc) and carries a tag, so nothing it
// started survives its stop, which comes after a short idle once its last
// lease is released, or at Close. A server that dies is restarted on the
// next call, with backoff; its stderr goes to the log, bounded;
// notifications/tools/list_changed is honoured from the next Tools call.
//
// The client side of the protocol is the official
// github.com/modelcontextprotocol/go-sdk.
package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
)

// TagKey is the environment variable every stdio server (and so everything
// it starts) carries, with a value unique to that server process: what is
// still tagged after the server's group was stopped (setsid escapees) is
// stopped too.
const TagKey = "SCV_MCP_SERVER"

// Defaults.
const (
	DefaultStartupTimeout  = 30 * time.Second
	DefaultToolTimeout     = 120 * time.Second
	DefaultIdleTimeout     = 30 * time.Second
	DefaultMaxMessageBytes = 16 << 20
	DefaultOutputLimit     = 65536
	// The first restart of a failed server waits DefaultBackoff; each
	// further failure doubles the wait up to DefaultMaxBackoff. A server
	// that ran for longer than resetAfter starts over from the first step.
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 30 * time.Second
	resetAfter        = time.Minute
	// politeWait is how long a stdio server gets to exit after its stdin
	// is closed before its group is sent TERM.
	politeWait = 500 * time.Millisecond
	// maxToolsPerServer bounds what one tools/list may offer.
	maxToolsPerServer = 512
	// maxDescriptionBytes bounds the model-facing description of one tool.
	maxDescriptionBytes = 4096
	// maxSchemaBytes bounds the input schema of one tool.
	maxSchemaBytes = 64 << 10
	// maxSummaryArgs bounds the arguments shown in an approval summary.
	maxSummaryArgs = 4096
)

// Server is one configured MCP server, as internal/app resolves it from the
// configuration: either a stdio server (Command) or a streamable HTTP server
// (URL), and the policy one session applies to its tools.
type Server struct {
	Name string
	// Command is the resolved executable of a stdio server.
	Command string
	Args    []string
	// Env is the complete environment of a stdio server.
	Env []string
	// Dir is the working directory of a stdio server (and its workspace
	// when it is sandboxed).
	Dir string
	// Sandbox confines a stdio server when its mode is on.
	Sandbox sandbox.Config

	// URL is the endpoint of a streamable HTTP server; Headers are sent
	// with every request (an Authorization header included).
	URL     string
	Headers map[string]string

	StartupTimeout time.Duration
	ToolTimeout    time.Duration

	// Tools, when not empty, lists the only tools offered (the server's
	// names); DisabledTools are never offered.
	Tools         []string
	DisabledTools []string
	// Risk is the risk of every call; ReadOnlyTools are read_only instead.
	Risk          tool.Risk
	ReadOnlyTools []string

	// Problem, when set, says why the server cannot be used (a variable
	// env_from names is not set, the command is not found); it is reported
	// and its tools are not offered.
	Problem string
}

// Transport is "stdio" or "http".
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// launchKey identifies a running server: sessions of one workspace whose
// configuration starts the server the same way (sandbox included) share
// it.
func (s Server) launchKey(workspace string) string {
	b, _ := json.Marshal(struct {
		Name, Workspace, Command, Dir, URL string
		Args, Env                          []string
		Headers                            map[string]string
		Startup                            time.Duration
		Sandbox                            sandbox.Config
	}{s.Name, workspace, s.Command, s.Dir, s.URL, s.Args, s.Env, s.Headers, s.StartupTimeout, s.Sandbox})
	sum := sha256.Sum256(b)
	return s.Name + "@" + workspace + "#" + hex.EncodeToString(sum[:8])
}

// Options configure a Manager.
type Options struct {
	Logger *slog.Logger
	// InstanceID names this SCV process in the tags of its stdio servers.
	InstanceID string
	// Version is the client version announced to servers.
	Version string
	// IdleTimeout is how long a server without leases keeps running.
	IdleTimeout time.Duration
	// Grace is the TERM→KILL delay when a stdio server is stopped.
	Grace time.Duration
	// MaxMessageBytes bounds one message from a server.
	MaxMessageBytes int
	// Backoff and MaxBackoff space the restarts of a failing server.
	Backoff, MaxBackoff time.Duration
	// Contain, when set, holds every process of a stdio server in one
	// scope, stopped with the server.
	Contain *proc.Containment
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.InstanceID == "" {
		o.InstanceID = "scv"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Grace <= 0 {
		o.Grace = proc.DefaultGrace
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff < o.Backoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.Backoff)
	}
	return o
}

// backoff is the wait before the restart after n consecutive failures.
func (o Options) backoff(n int) time.Duration {
	d := o.Backoff
	for i := 1; i < n && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}
