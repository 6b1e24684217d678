package clawbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/store"
)

// Component states, as status shows them.
const (
	StateDisabled     = "disabled"
	StateStarting     = "starting"
	StateConnected    = "connected"
	StateDisconnected = "disconnected"
	StateBackoff      = "backoff"
	StateStopping     = "stopping"
	StateStopped      = "stopped"
	StateFailed       = "failed"
)

// Supervision timing.
const (
	// ReconcileEvery is how often the supervisor reconciles the accounts
	// with their files.
	ReconcileEvery = 2 * time.Second
	// BackoffMin and BackoffMax space the restarts of a bridge that
	// exited on its own; a bridge that ran BackoffMax without exiting
	// starts over at BackoffMin.
	BackoffMin = time.Second
	BackoffMax = time.Minute
)

// Options configure a Supervisor.
type Options struct {
	Layout paths.Layout
	// Store holds the delivery state. When nil, OpenStore opens it the
	// first time an account exists (a daemon without accounts never opens
	// the database for the bridge), and Run closes it when it returns.
	Store     *store.Store
	OpenStore func(ctx context.Context) (*store.Store, error)
	Daemon    Daemon
	Logger    *slog.Logger
	// Workspace is the daemon's own directory: the workspace of accounts
	// whose settings name none.
	Workspace string
	// MaxToolTimeout is tools.max_timeout_seconds; an owner's turns get
	// OwnerLimit of it.
	MaxToolTimeout time.Duration
	// Secrets are key values never sent to WeChat (the bot token is added
	// per account).
	Secrets []string
	// UserHome is the user's home directory, shown as ~ in replies.
	UserHome string
	// HTTP is the client of iLink calls; nil is HTTPClient().
	HTTP *http.Client
	Now  func() time.Time
	// Tuning shortens the bridge's durations in tests; ReconcileEvery and
	// the backoff bounds likewise (zero: the defaults).
	Tuning         Tuning
	ReconcileEvery time.Duration
	BackoffMin     time.Duration
	BackoffMax     time.Duration
}

// AccountStatus is one account as status shows it.
type AccountStatus struct {
	Account     string
	BotID       string
	OwnerUserID string
	Enabled     bool
	Workspace   string
	// RemoteTools is what the running bridge applies: "owner" only when
	// it runs with remote_tools = "owner" and knows the owner.
	RemoteTools string
	State       string
	Restarts    int
	LastError   string
	LastPoll    time.Time
	// Backoff is the wait before the next restart while State is backoff.
	Backoff time.Duration
	// Load is what the running bridge holds in memory and refused.
	Load Load
}

// Change is a change of an account's settings; zero fields keep the saved
// value.
type Change struct {
	Enabled     *bool
	Workspace   string
	RemoteTools string
}

// Supervisor runs one bridge per enabled account and keeps them in step
// with their files.
type Supervisor struct {
	opts  Options
	files Files
	log   *slog.Logger

	reload  chan chan struct{}
	exited  chan struct{}
	adminMu sync.Mutex // serialises Configure and Logout

	storeMu sync.Mutex
	st      *store.Store
	opened  bool // st was opened by OpenStore (Run closes it)

	mu    sync.Mutex
	comps map[string]*component
}

// component is the supervisor's record of one account.
type component struct {
	account string
	st      AccountStatus
	// key identifies the files the instance runs with; a change replaces
	// the instance. failedKey is the key of files whose bridge cannot run
	// (its state belongs to another identity): it is not restarted until
	// the files change.
	key, failedKey string
	inst           *instance
	backoff        time.Duration
	retryAt        time.Time
}

// instance is one run of a bridge.
type instance struct {
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	started time.Time
}

// NewSupervisor returns a supervisor; Run starts it.
func NewSupervisor(opts Options) *Supervisor {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTP == nil {
		opts.HTTP = HTTPClient()
	}
	def(&opts.ReconcileEvery, ReconcileEvery)
	def(&opts.BackoffMin, BackoffMin)
	def(&opts.BackoffMax, BackoffMax)
	if opts.Tuning.OwnerLimit <= 0 {
		opts.Tuning.OwnerLimit = OwnerLimit(opts.MaxToolTimeout)
	}
	opts.Tuning = opts.Tuning.withDefaults()
	return &Supervisor{opts: opts, files: Files{Layout: opts.Layout}, log: opts.Logger, st: opts.Store,
		reload: make(chan chan struct{}), exited: make(chan struct{}, 1), comps: map[string]*component{}}
}

// store returns the delivery state's store, opening it on first use.
func (s *Supervisor) store(ctx context.Context) (*store.Store, error) {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.st != nil {
		return s.st, nil
	}
	if s.opts.OpenStore == nil {
		return nil, errors.New("the bridge has no store")
	}
	st, err := s.opts.OpenStore(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the store of the bridge's state: %w", err)
	}
	s.st, s.opened = st, true
	return st, nil
}

func (s *Supervisor) closeStore() {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.opened && s.st != nil {
		s.st.Close()
		s.st, s.opened = nil, false
	}
}

// Run reconciles at start, every ReconcileEvery, on Reload and when a
// bridge exits, until ctx ends; then it stops and joins every bridge.
func (s *Supervisor) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.ReconcileEvery)
	defer t.Stop()
	defer s.closeStore()
	defer s.stopAll()
	for {
		s.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.exited:
		case ack := <-s.reload:
			s.reconcile(ctx)
			close(ack)
		}
	}
}

// Reload reconciles now and returns when that is done.
func (s *Supervisor) Reload(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case s.reload <- ack:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status lists the accounts, by name.
func (s *Supervisor) Status() []AccountStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AccountStatus, 0, len(s.comps))
	for _, c := range s.comps {
		out = append(out, c.st)
	}
	slices.SortFunc(out, func(a, b AccountStatus) int {
		if a.Account < b.Account {
			return -1
		}
		if a.Account > b.Account {
			return 1
		}
		return 0
	})
	return out
}

// Account is one account's status (false when the supervisor does not
// know it).
func (s *Supervisor) Account(name string) (AccountStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comps[name]
	if !ok {
		return AccountStatus{}, false
	}
	return c.st, true
}

// Configure saves a change of an account's settings and reconciles, so
// the running bridge uses them when it returns. Enabling needs saved
// credentials; a workspace must be an existing absolute directory.
func (s *Supervisor) Configure(ctx context.Context, account string, ch Change) (AccountStatus, error) {
	if err := CheckAccount(account); err != nil {
		return AccountStatus{}, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	set, err := s.files.Settings(account)
	if err != nil {
		return AccountStatus{}, err
	}
	if ch.Enabled != nil {
		set.Enabled = *ch.Enabled
	}
	if ch.RemoteTools != "" {
		set.RemoteTools = ch.RemoteTools
	}
	if ch.Workspace != "" {
		ws, err := paths.CanonicalDir(ch.Workspace)
		if err != nil {
			return AccountStatus{}, fmt.Errorf("workspace %v", err)
		}
		set.Workspace = ws
	}
	if err := set.Check(); err != nil {
		return AccountStatus{}, err
	}
	if set.Enabled {
		if _, err := s.files.Credentials(account); err != nil {
			return AccountStatus{}, err
		}
	}
	if err := s.files.SaveSettings(account, set); err != nil {
		return AccountStatus{}, err
	}
	if err := s.Reload(ctx); err != nil {
		return AccountStatus{}, err
	}
	st, _ := s.Account(account)
	return st, nil
}

// Logout disables the account with remote_tools reset to "none" (so a
// later login never inherits them), stops and joins its bridge, then
// deletes its delivery state, its credentials and its settings.
func (s *Supervisor) Logout(ctx context.Context, account string) error {
	if err := CheckAccount(account); err != nil {
		return err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	if _, err := s.files.Credentials(account); errors.Is(err, fs.ErrNotExist) {
		if _, known := s.Account(account); !known {
			return fmt.Errorf("account %q is not logged in", account)
		}
	}
	if err := s.files.SaveSettings(account, Settings{Enabled: false, RemoteTools: RemoteToolsNone}); err != nil {
		return err
	}
	if err := s.Reload(ctx); err != nil {
		return err
	}
	st, err := s.store(ctx)
	if err != nil {
		return err
	}
	if err := st.BridgeForget(ctx, account); err != nil {
		return err
	}
	if err := s.files.Delete(account); err != nil {
		return err
	}
	if err := s.Reload(ctx); err != nil {
		return err
	}
	s.log.Info("clawbot account logged out", "account", account)
	return nil
}

// desired is what an account's files ask for.
type desired struct {
	creds    Credentials
	settings Settings
	key      string
	err      error // the files cannot be used
	loggedIn bool
}

func (s *Supervisor) desire(account string) desired {
	var d desired
	set, serr := s.files.Settings(account)
	creds, cerr := s.files.Credentials(account)
	d.creds, d.settings = creds, set
	d.loggedIn = cerr == nil
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%t\x00%s\x00%s", creds.Token.Reveal(), creds.BotID, creds.UserID, creds.BaseURL, set.Enabled, set.Workspace, set.RemoteTools)
	d.key = hex.EncodeToString(h.Sum(nil))
	switch {
	case serr != nil:
		d.err = serr
	case cerr != nil && !errors.Is(cerr, fs.ErrNotExist):
		d.err = cerr
	}
	return d
}

// reconcile brings every account to what its files ask for.
func (s *Supervisor) reconcile(ctx context.Context) {
	names, err := s.files.Accounts()
	if err != nil {
		s.log.Warn("clawbot cannot list accounts", "err", err)
		return
	}
	s.mu.Lock()
	for n := range s.comps {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	s.mu.Unlock()
	for _, n := range names {
		if ctx.Err() != nil {
			return
		}
		s.reconcileOne(ctx, n)
	}
}

func (s *Supervisor) comp(account string) *component {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comps[account]
	if c == nil {
		c = &component{account: account, st: AccountStatus{Account: account, State: StateStopped, RemoteTools: RemoteToolsNone}}
		s.comps[account] = c
	}
	return c
}

func (s *Supervisor) reconcileOne(ctx context.Context, account string) {
	c := s.comp(account)
	d := s.desire(account)
	s.mu.Lock()
	c.st.BotID, c.st.OwnerUserID = d.creds.BotID, d.creds.UserID
	c.st.Enabled, c.st.Workspace = d.settings.Enabled, d.settings.Workspace
	s.mu.Unlock()

	// An instance that exited on its own is collected first.
	if c.inst != nil {
		select {
		case <-c.inst.done:
			s.exitedOnItsOwn(c)
		default:
		}
	}
	switch {
	case d.err != nil:
		s.stop(c)
		s.set(c, StateFailed, d.err.Error())
		return
	case !d.loggedIn:
		if _, err := os.Stat(s.files.settingsPath(account)); errors.Is(err, fs.ErrNotExist) {
			// Neither credentials nor settings: the account is gone.
			s.stop(c)
			s.mu.Lock()
			delete(s.comps, account)
			s.mu.Unlock()
			return
		}
		s.stop(c)
		s.set(c, StateStopped, "not logged in")
		return
	case !d.settings.Enabled:
		s.stop(c)
		s.set(c, StateDisabled, "")
		return
	}
	if c.inst != nil && c.key == d.key {
		return // running with these files
	}
	if c.failedKey == d.key {
		return // failed for good with these files; the status says why
	}
	c.failedKey = ""
	if c.inst != nil {
		s.stop(c) // replaced: joined before its successor starts
		c.backoff, c.retryAt = 0, time.Time{}
	}
	if c.key != d.key {
		c.backoff, c.retryAt = 0, time.Time{}
	}
	if now := s.opts.Now(); now.Before(c.retryAt) {
		s.mu.Lock()
		c.st.State, c.st.Backoff = StateBackoff, c.backoff
		s.mu.Unlock()
		return
	}
	s.start(ctx, c, d)
}

// exitedOnItsOwn records an instance's exit and schedules its restart.
func (s *Supervisor) exitedOnItsOwn(c *component) {
	inst := c.inst
	c.inst = nil
	msg := "the bridge stopped"
	if inst.err != nil {
		msg = inst.err.Error()
	}
	var be *store.BindingError
	if errors.As(inst.err, &be) {
		// Restarting cannot help: the files name another identity than
		// the state's. Logging out (or restoring the credentials) can.
		c.failedKey = c.key
		s.log.Error("clawbot bridge cannot run", "account", c.account, "err", msg)
		s.mu.Lock()
		c.st.State, c.st.LastError, c.st.RemoteTools = StateFailed, cleanMsg(msg), RemoteToolsNone
		s.mu.Unlock()
		return
	}
	if s.opts.Now().Sub(inst.started) >= s.opts.BackoffMax {
		c.backoff = 0
	}
	c.backoff = min(max(c.backoff*2, s.opts.BackoffMin), s.opts.BackoffMax)
	c.retryAt = s.opts.Now().Add(c.backoff)
	s.log.Warn("clawbot bridge exited; restarting after a backoff", "account", c.account, "err", msg, "backoff", c.backoff)
	s.mu.Lock()
	c.st.State, c.st.LastError, c.st.Backoff = StateBackoff, cleanMsg(msg), c.backoff
	c.st.RemoteTools = RemoteToolsNone
	s.mu.Unlock()
}

func (s *Supervisor) set(c *component, state, lastErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.st.State = state
	if lastErr != "" || state == StateDisabled {
		c.st.LastError = cleanMsg(lastErr)
	}
	c.st.Backoff = 0
}

// start launches a bridge for the account.
func (s *Supervisor) start(ctx context.Context, c *component, d desired) {
	ws := d.settings.Workspace
	if ws == "" {
		ws = s.opts.Workspace
	}
	if _, err := paths.CanonicalDir(ws); err != nil {
		s.set(c, StateFailed, "workspace "+err.Error())
		return
	}
	st, err := s.store(ctx)
	if err != nil {
		s.set(c, StateFailed, err.Error())
		return
	}
	restart := c.key == d.key && c.st.State == StateBackoff
	c.key = d.key
	secrets := append(slices.Clone(s.opts.Secrets), d.creds.Token.Reveal())
	hidden := map[string]string{ws: ".", s.opts.Layout.Home: "$SCV_HOME"}
	if s.opts.UserHome != "" {
		hidden[s.opts.UserHome] = "~"
	}
	tools := RemoteToolsNone
	if d.settings.RemoteTools == RemoteToolsOwner && d.creds.UserID != "" {
		tools = RemoteToolsOwner
	}
	inst := &instance{done: make(chan struct{}), started: s.opts.Now()}
	b := &bridge{
		account: c.account, creds: d.creds, settings: d.settings, workspace: ws,
		client: &Client{BaseURL: d.creds.BaseURL, Token: d.creds.Token, HTTP: s.opts.HTTP, PollTimeout: s.opts.Tuning.PollTimeout},
		store:  st, daemon: s.opts.Daemon, clean: NewSanitizer(secrets, hidden),
		log: s.log, now: s.opts.Now, tune: s.opts.Tuning, report: &compReporter{s: s, c: c},
	}
	ictx, cancel := context.WithCancel(ctx)
	inst.cancel = cancel
	s.mu.Lock()
	c.inst = inst
	if restart {
		c.st.Restarts++
	}
	c.st.State, c.st.Backoff, c.st.RemoteTools = StateStarting, 0, tools
	s.mu.Unlock()
	s.log.Info("clawbot bridge starting", "account", c.account, "remote_tools", tools, "workspace", ws)
	go func() {
		defer close(inst.done)
		defer func() {
			if r := recover(); r != nil {
				inst.err = fmt.Errorf("the bridge crashed: %v", r)
				s.log.Error("clawbot bridge panicked", "account", c.account, "panic", r, "stack", string(debug.Stack()))
			}
			select {
			case s.exited <- struct{}{}:
			default:
			}
		}()
		inst.err = b.run(ictx)
		if inst.err == nil && ictx.Err() == nil {
			inst.err = errors.New("the bridge stopped on its own")
		}
	}()
}

// stop cancels and joins the account's running instance.
func (s *Supervisor) stop(c *component) {
	if c.inst == nil {
		return
	}
	s.mu.Lock()
	c.st.State = StateStopping
	s.mu.Unlock()
	c.inst.cancel()
	<-c.inst.done
	c.inst = nil
	c.key = ""
	s.mu.Lock()
	c.st.State, c.st.RemoteTools = StateStopped, RemoteToolsNone
	s.mu.Unlock()
	s.log.Info("clawbot bridge stopped", "account", c.account)
}

// stopAll stops every bridge (the daemon stops).
func (s *Supervisor) stopAll() {
	s.mu.Lock()
	comps := make([]*component, 0, len(s.comps))
	for _, c := range s.comps {
		comps = append(comps, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range comps {
		if c.inst != nil {
			c.inst.cancel()
		}
	}
	for _, c := range comps {
		wg.Go(func() { s.stop(c) })
	}
	wg.Wait()
}

// compReporter feeds a bridge's reports into its component's status,
// unless the instance is being stopped.
type compReporter struct {
	s *Supervisor
	c *component
}

func (r *compReporter) state(st string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.c.st.State != StateStopping && r.c.st.State != StateStopped {
		r.c.st.State = st
	}
}

func (r *compReporter) polled(at time.Time) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.c.st.LastPoll = at
}

func (r *compReporter) loaded(l Load) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.c.st.Load = l
}

func (r *compReporter) failure(msg string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.c.st.LastError = cleanMsg(msg)
}
