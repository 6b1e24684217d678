package proto

// The connection family: the handshake, request errors and the daemon's
// own requests. None of these events belongs to a session.

const (
	TypeInitialize     = "initialize"
	TypeDaemonStatus   = "daemon.status"
	TypeDaemonShutdown = "daemon.shutdown"
	TypeDaemonReload   = "daemon.reload"

	EventInitialized  = "initialized"
	EventError        = "error"
	EventDaemonStatus = "daemon.status"
)

// Peer names a client or server.
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Initialize opens a connection; nothing else is accepted before it.
type Initialize struct {
	Envelope
	ProtocolVersion int  `json:"protocol_version"`
	Client          Peer `json:"client"`
}

func (*Initialize) MessageType() string { return TypeInitialize }

// Initialized answers initialize.
type Initialized struct {
	Header
	ProtocolVersion int  `json:"protocol_version"`
	Server          Peer `json:"server"`
}

func (*Initialized) EventType() string { return EventInitialized }

// Error answers a request the server refused. Fatal says the server ends
// the connection after it.
type Error struct {
	Header
	Code    string `json:"code"`
	Message string `json:"message"`
	Fatal   bool   `json:"fatal"`
}

func (*Error) EventType() string { return EventError }

// DaemonStatusRequest asks the daemon for its status (daemon.status; served
// on the daemon socket only).
type DaemonStatusRequest struct {
	Envelope
}

func (*DaemonStatusRequest) MessageType() string { return TypeDaemonStatus }

// DaemonShutdown asks the daemon to stop (daemon.shutdown; daemon socket
// only). It is answered by a daemon.status event whose Message is
// "shutting down".
type DaemonShutdown struct {
	Envelope
}

func (*DaemonShutdown) MessageType() string { return TypeDaemonShutdown }

// DaemonReload asks the daemon to reconcile its components now (the WeChat
// bridges; scv reload). Daemon socket only; answered by daemon.status with
// Status once done. An SCV extension.
type DaemonReload struct {
	Envelope
}

func (*DaemonReload) MessageType() string { return TypeDaemonReload }

// DaemonStatusReply is the daemon.status event. It answers daemon.status
// and the daemon's component requests (daemon.reload, clawbot.settings,
// clawbot.logout) with Status, and daemon.shutdown with Message instead;
// each field is present only in its answer.
type DaemonStatusReply struct {
	Header
	Status  *DaemonStatus `json:"status,omitempty"`
	Message string        `json:"message,omitempty"`
}

func (*DaemonStatusReply) EventType() string { return EventDaemonStatus }

// DaemonStatus is the daemon's state.
type DaemonStatus struct {
	Version       string      `json:"version"`
	PID           int         `json:"pid"`
	UptimeSeconds int64       `json:"uptime_seconds"`
	Sessions      int         `json:"sessions"`
	Delegations   Delegations `json:"delegations"`
	// Clawbot lists the WeChat bridge accounts the daemon knows of.
	Clawbot []ClawbotAccount `json:"clawbot,omitempty"`
	// Database is the session database's state; absent when the daemon
	// could not read it.
	Database *Database `json:"database,omitempty"`
	// Provider is what a session started without overrides uses; absent
	// when the daemon's configuration does not load (or from an older
	// daemon).
	Provider *DaemonProvider `json:"provider,omitempty"`
	// ProcessTracking says how the daemon finds every process its tool
	// calls, MCP servers and delegated runs start: "cgroup (…)",
	// "subreaper (…)" or "group+tag (…)", with the reason in parentheses.
	ProcessTracking string `json:"process_tracking,omitempty"`
}

// DaemonProvider is the daemon's provider settings (daemon.status): what
// a session started without overrides would use, and the configuration
// files they come from.
type DaemonProvider struct {
	Profile string `json:"profile"`
	WireAPI string `json:"wire_api"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url"`
	// KeyEnv names the variable holding the key ("" for an inline or no
	// key); KeySet says the daemon's environment has it.
	KeyEnv string `json:"key_env,omitempty"`
	KeySet bool   `json:"key_set"`
	// ConfigFiles are the files read, lowest layer first.
	ConfigFiles []string `json:"config_files"`
}

// Database describes the session database (daemon.status).
type Database struct {
	Path string `json:"path"`
	// FileBytes is the size of the database file and its write-ahead log;
	// FreeBytes the part of it the next compaction gives back.
	FileBytes int64 `json:"file_bytes"`
	FreeBytes int64 `json:"free_bytes"`
	// Sessions and Turns count what is stored.
	Sessions int `json:"sessions"`
	Turns    int `json:"turns"`
}

// Delegations counts delegated agent runs.
type Delegations struct {
	Running       int `json:"running"`
	OrphansReaped int `json:"orphans_reaped"`
}
