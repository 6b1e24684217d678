package delegation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Conversations with delegated agents. A conversation is a delegated CLI's
// own session (Claude Code's session, a Codex thread, a pi session) that a
// later call continues. The model only ever sees its handle, "<agent>-<n>",
// numbered per SCV session and agent and never reused; the vendor's id stays
// in SCV's store. A conversation is pinned to its agent and directory, runs
// one turn at a time, and closes when it has been idle too long or is the
// least recently used one of its session when a new one needs the room.
// Closed conversations stay as tombstones (without their vendor id), so a
// call naming one learns why it is gone and a handle is never reused.
//
// The Registry is what every holder of a conversation goes through: an
// agent_* call, and later a background job or an ACP session. Acquire takes
// the conversation's one turn (a Lease); the lease's Done records the turn.

// Defaults of agent.max_conversations and agent.conversation_idle_seconds.
const (
	DefaultMaxConversations = 8
	DefaultConversationIdle = 86400 * time.Second
)

// Why a conversation closed.
const (
	ClosedEvicted = "evicted"
	ClosedExpired = "expired"
)

// Conversation is one stored conversation.
type Conversation struct {
	// Session is the SCV session the conversation belongs to.
	Session string
	// Handle is "<agent>-<n>"; N is n.
	Handle string
	N      int
	Agent  string
	// Cwd is the resolved directory the conversation runs in.
	Cwd string
	// VendorID is the CLI's own session or thread id ("" once closed).
	VendorID string
	// Turns counts the calls made on it.
	Turns         int
	Created, Used time.Time
	// Closed is zero while the conversation is live; ClosedWhy is
	// ClosedEvicted or ClosedExpired.
	Closed    time.Time
	ClosedWhy string
}

// Live says the conversation can still be continued.
func (c Conversation) Live() bool { return c.Closed.IsZero() }

// ConversationStore keeps conversations; the SQLite store implements it
// (internal/store), MemoryConversations keeps them in memory for servers
// without a store.
type ConversationStore interface {
	// Conversations lists a session's conversations, tombstones included,
	// oldest first; every session's when session is "".
	Conversations(ctx context.Context, session string) ([]Conversation, error)
	// PutConversation inserts or replaces (session, handle).
	PutConversation(ctx context.Context, c Conversation) error
}

// RegistryOptions configure a Registry.
type RegistryOptions struct {
	Store ConversationStore
	// Max is agent.max_conversations, Idle agent.conversation_idle_seconds
	// (0: the defaults).
	Max  int
	Idle time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Registry hands out conversation turns. One per process: it holds which
// conversations have a turn running, which the store does not (a turn dies
// with its process). WithLimits gives views of it with a session's own
// bounds (a project's configuration may lower them).
type Registry struct {
	opts RegistryOptions
	*shared
}

type shared struct {
	mu   sync.Mutex
	busy map[string]string // session + "\x00" + handle → the running call
}

// NewRegistry returns a registry over opts.Store.
func NewRegistry(opts RegistryOptions) *Registry {
	if opts.Max <= 0 {
		opts.Max = DefaultMaxConversations
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultConversationIdle
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Store == nil {
		opts.Store = NewMemoryConversations()
	}
	return &Registry{opts: opts, shared: &shared{busy: map[string]string{}}}
}

// WithLimits is the registry with other bounds (0 keeps the registry's),
// sharing its store and running turns.
func (r *Registry) WithLimits(max int, idle time.Duration) *Registry {
	v := *r
	if max > 0 {
		v.opts.Max = max
	}
	if idle > 0 {
		v.opts.Idle = idle
	}
	return &v
}

// Max and Idle are the registry's bounds.
func (r *Registry) Max() int            { return r.opts.Max }
func (r *Registry) Idle() time.Duration { return r.opts.Idle }

// ValidConversationHandle says h has the form of a handle ("<agent>-<n>", n ≥ 1): a
// vendor session id (a UUID, a path) never has it.
func ValidConversationHandle(h string) bool {
	agent, n, ok := strings.Cut(h, "-")
	if !ok || agent == "" || n == "" || n[0] == '0' || len(n) > 9 {
		return false
	}
	for i := 0; i < len(agent); i++ {
		if c := agent[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// BusyError is a second turn asked of a conversation while one runs.
type BusyError struct {
	Handle string
	// CallID is the call running on it.
	CallID string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("conversation %s is busy: call %s is still running on it; wait for that call to finish, or omit `session` to start a new conversation", e.Handle, e.CallID)
}

// ClosedError is a call naming a conversation that closed.
type ClosedError struct {
	Conversation Conversation
	Max          int
	Idle         time.Duration
}

func (e *ClosedError) Error() string {
	c := e.Conversation
	why := fmt.Sprintf("it was idle for more than %d s (agent.conversation_idle_seconds)", int(e.Idle/time.Second))
	if c.ClosedWhy == ClosedEvicted {
		why = fmt.Sprintf("it was the least recently used when a new one needed room (agent.max_conversations = %d)", e.Max)
	}
	return fmt.Sprintf("conversation %s is closed: %s; omit `session` to start a new conversation, and give it the context again", c.Handle, why)
}

// ErrUnknownConversation is a handle this session never had.
var ErrUnknownConversation = errors.New("unknown conversation")

// MismatchError is a conversation continued with another agent or in
// another directory than it started with.
type MismatchError struct{ Message string }

func (e *MismatchError) Error() string { return e.Message }

// LimitError says every conversation of the session has a turn running, so
// none can make room for a new one.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("all %d conversations of this session (agent.max_conversations) have a call running; wait for one to finish", e.Max)
}

// Lease is one turn of a conversation: a continued one (Acquire) or one
// that may become a new one (Start). Exactly one of Done or Release ends it.
type Lease struct {
	r       *Registry
	session string
	agent   string
	cwd     string
	conv    Conversation
	cont    bool
	ended   bool
}

// Conversation is the conversation being continued (ok false for a new one).
func (l *Lease) Conversation() (Conversation, bool) { return l.conv, l.cont }

// Start begins the first turn of what may become a new conversation of
// agent in cwd; it takes no room until Done records it.
func (r *Registry) Start(session, agent, cwd string) *Lease {
	return &Lease{r: r, session: session, agent: agent, cwd: cwd}
}

// Acquire takes the one turn of conversation handle of session for call
// callID of agent in cwd ("" keeps the conversation's own). It fails with
// *BusyError, *ClosedError, *MismatchError or ErrUnknownConversation.
func (r *Registry) Acquire(ctx context.Context, session, agent, handle, cwd, callID string) (*Lease, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.checkLocked(ctx, session, agent, handle, cwd)
	if err != nil {
		return nil, err
	}
	r.busy[busyKey(session, handle)] = callID
	return &Lease{r: r, session: session, agent: agent, cwd: c.Cwd, conv: c, cont: true}, nil
}

// Peek makes Acquire's checks without taking the turn: what a call's
// approval shows, refused before anyone is asked.
func (r *Registry) Peek(ctx context.Context, session, agent, handle, cwd string) (Conversation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkLocked(ctx, session, agent, handle, cwd)
}

func (r *Registry) checkLocked(ctx context.Context, session, agent, handle, cwd string) (Conversation, error) {
	all, err := r.opts.Store.Conversations(ctx, session)
	if err != nil {
		return Conversation{}, fmt.Errorf("read conversations: %w", err)
	}
	i := slices.IndexFunc(all, func(c Conversation) bool { return c.Handle == handle })
	if i < 0 {
		var live []string
		for _, c := range all {
			if c.Live() {
				live = append(live, c.Handle)
			}
		}
		known := "it has none"
		if len(live) > 0 {
			known = "it has " + strings.Join(live, ", ")
		}
		return Conversation{}, fmt.Errorf("%w %s in this SCV session (%s): use a handle an earlier call returned, or omit `session` to start a new conversation", ErrUnknownConversation, handle, known)
	}
	c := all[i]
	if c.Agent != agent {
		return Conversation{}, &MismatchError{fmt.Sprintf("%s is a conversation with agent_%s, not agent_%s: continue it with agent_%s, or omit `session`", handle, c.Agent, agent, c.Agent)}
	}
	if cwd != "" && cwd != c.Cwd {
		return Conversation{}, &MismatchError{fmt.Sprintf("conversation %s runs in %s, not %s: a conversation stays in the directory it started in; omit `cwd`, or omit `session` to start a new conversation there", handle, c.Cwd, cwd)}
	}
	if id, ok := r.busy[busyKey(session, handle)]; ok {
		return Conversation{}, &BusyError{Handle: handle, CallID: id}
	}
	now := r.opts.Now()
	if c.Live() && now.Sub(c.Used) > r.opts.Idle {
		c = r.closeLocked(ctx, c, ClosedExpired, now)
	}
	if !c.Live() {
		return Conversation{}, &ClosedError{Conversation: c, Max: r.opts.Max, Idle: r.opts.Idle}
	}
	return c, nil
}

// Busy reports the call running on a conversation ("" when none).
func (r *Registry) Busy(session, handle string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy[busyKey(session, handle)]
}

// List returns a session's conversations (every session's with ""),
// oldest first, with those idle too long shown closed (the store is not
// written).
func (r *Registry) List(ctx context.Context, session string) ([]Conversation, error) {
	all, err := r.opts.Store.Conversations(ctx, session)
	if err != nil {
		return nil, err
	}
	now := r.opts.Now()
	for i, c := range all {
		if c.Live() && now.Sub(c.Used) > r.opts.Idle {
			all[i].Closed, all[i].ClosedWhy = c.Used.Add(r.opts.Idle), ClosedExpired
		}
	}
	return all, nil
}

func (r *Registry) closeLocked(ctx context.Context, c Conversation, why string, now time.Time) Conversation {
	c.Closed, c.ClosedWhy, c.VendorID = now, why, ""
	// A tombstone that cannot be written leaves the conversation live in
	// the store; it is closed again on its next use.
	_ = r.opts.Store.PutConversation(ctx, c)
	return c
}

// Release ends the lease without a turn (the run never started).
func (l *Lease) Release() {
	if l.ended {
		return
	}
	l.ended = true
	if l.cont {
		l.r.mu.Lock()
		delete(l.r.busy, busyKey(l.session, l.conv.Handle))
		l.r.mu.Unlock()
	}
}

// Done records the turn and ends the lease. vendorID is the id the run
// reported ("" when it reported none: a continued conversation keeps its
// own, and a new one is not kept, since it could not be resumed). For a new
// conversation the least recently used live ones of the session close
// first, until it fits agent.max_conversations. ok is false when nothing
// was recorded.
func (l *Lease) Done(ctx context.Context, vendorID string) (Conversation, bool, error) {
	if l.ended {
		return Conversation{}, false, errors.New("conversation turn already ended")
	}
	defer l.Release()
	r := l.r
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	if l.cont {
		c := l.conv
		c.Turns++
		c.Used = now
		if vendorID != "" {
			c.VendorID = vendorID
		}
		if err := r.opts.Store.PutConversation(ctx, c); err != nil {
			return Conversation{}, false, fmt.Errorf("record conversation %s: %w", c.Handle, err)
		}
		return c, true, nil
	}
	if vendorID == "" {
		return Conversation{}, false, nil
	}
	all, err := r.opts.Store.Conversations(ctx, l.session)
	if err != nil {
		return Conversation{}, false, fmt.Errorf("read conversations: %w", err)
	}
	n := 0
	var live []Conversation
	for _, c := range all {
		if c.Agent == l.agent {
			n = max(n, c.N)
		}
		if !c.Live() {
			continue
		}
		if now.Sub(c.Used) > r.opts.Idle && r.busy[busyKey(l.session, c.Handle)] == "" {
			r.closeLocked(ctx, c, ClosedExpired, now)
			continue
		}
		live = append(live, c)
	}
	// Least recently used first; a conversation with a turn running is
	// never closed under it.
	slices.SortStableFunc(live, func(a, b Conversation) int { return a.Used.Compare(b.Used) })
	count := len(live)
	for _, c := range live {
		if count < r.opts.Max {
			break
		}
		if r.busy[busyKey(l.session, c.Handle)] != "" {
			continue
		}
		r.closeLocked(ctx, c, ClosedEvicted, now)
		count--
	}
	if count >= r.opts.Max {
		return Conversation{}, false, &LimitError{Max: r.opts.Max}
	}
	c := Conversation{Session: l.session, Handle: l.agent + "-" + strconv.Itoa(n+1), N: n + 1, Agent: l.agent, Cwd: l.cwd,
		VendorID: vendorID, Turns: 1, Created: now, Used: now}
	if err := r.opts.Store.PutConversation(ctx, c); err != nil {
		return Conversation{}, false, fmt.Errorf("record conversation %s: %w", c.Handle, err)
	}
	return c, true, nil
}

func busyKey(session, handle string) string { return session + "\x00" + handle }

// MemoryConversations is a ConversationStore in memory: for servers
// without a store, and tests.
type MemoryConversations struct {
	mu  sync.Mutex
	all []Conversation
}

// NewMemoryConversations returns an empty in-memory store.
func NewMemoryConversations() *MemoryConversations { return &MemoryConversations{} }

// Conversations implements ConversationStore.
func (m *MemoryConversations) Conversations(_ context.Context, session string) ([]Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Conversation
	for _, c := range m.all {
		if session == "" || c.Session == session {
			out = append(out, c)
		}
	}
	return out, nil
}

// PutConversation implements ConversationStore.
func (m *MemoryConversations) PutConversation(_ context.Context, c Conversation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.all {
		if x.Session == c.Session && x.Handle == c.Handle {
			m.all[i] = c
			return nil
		}
	}
	m.all = append(m.all, c)
	return nil
}

// DropSession forgets a session's conversations (the session was deleted).
func (m *MemoryConversations) DropSession(session string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.all = slices.DeleteFunc(m.all, func(c Conversation) bool { return c.Session == session })
}
