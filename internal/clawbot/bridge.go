package clawbot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/scv-agent/scv/internal/store"
)

// The bridge of one account: it polls iLink, claims what it accepts,
// runs each conversation's turns in order on the daemon, and stores every
// reply before sending it.

// Limits of a bridge.
const (
	// DefaultIdleTimeout is how long a conversation's session lives
	// without messages.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxConversations bounds the turns one account runs at once.
	DefaultMaxConversations = 4
	// DefaultMaxQueue bounds the messages one conversation holds, the one
	// being answered included (clawbot.max_queue_per_sender).
	DefaultMaxQueue = 8
	// DefaultMaxOpen bounds the conversations an account keeps in memory,
	// each with its open session (clawbot.max_conversations).
	DefaultMaxOpen = 64
	// DefaultMaxQueuedBytes bounds the text of the messages an account
	// holds, waiting or being answered (clawbot.max_queued_bytes).
	DefaultMaxQueuedBytes = 4 << 20
	// ToolFreeTurnLimit bounds a turn of a tool-free session.
	ToolFreeTurnLimit = 5 * time.Minute
	// OwnerTurnFloor is the least time an owner's turn gets; it gets
	// tools.max_timeout_seconds plus OwnerTurnMargin when that is longer.
	OwnerTurnFloor  = 30 * time.Minute
	OwnerTurnMargin = 5 * time.Minute
	// pollBackoffMin and pollBackoffMax space failed polls.
	pollBackoffMin = time.Second
	pollBackoffMax = time.Minute
	// sendAttempts is how often one pass tries a chunk before leaving it
	// pending for the next pass; maxSendFailures drops a reply that failed
	// this often in this process.
	sendAttempts    = 5
	maxSendFailures = 20
	// sendRepass is when a pass that left replies pending runs again.
	sendRepass = 30 * time.Second
	// storeWait bounds the store calls that must finish even while the
	// bridge stops.
	storeWait = 30 * time.Second
)

// Tuning holds the bridge's durations; tests shorten them. Zero fields take
// the defaults.
type Tuning struct {
	IdleTimeout      time.Duration
	IdleSweep        time.Duration
	MaxConversations int
	ToolFreeLimit    time.Duration
	OwnerLimit       time.Duration
	PollBackoffMin   time.Duration
	PollBackoffMax   time.Duration
	SendRetry        time.Duration
	SendRepass       time.Duration
	// PollTimeout is the client's limit of one getupdates (45 s).
	PollTimeout time.Duration
	// MaxQueue (the messages one conversation holds: the one being
	// answered and those waiting behind it), MaxOpen and MaxQueuedBytes
	// bound what the bridge holds in memory; a message past a bound gets
	// the busy reply.
	MaxQueue       int
	MaxOpen        int
	MaxQueuedBytes int
}

// def sets *p to v when it is zero or negative (not set).
func def[T int | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

func (t Tuning) withDefaults() Tuning {
	def(&t.IdleTimeout, DefaultIdleTimeout)
	def(&t.IdleSweep, time.Minute)
	def(&t.ToolFreeLimit, ToolFreeTurnLimit)
	def(&t.OwnerLimit, OwnerTurnFloor)
	def(&t.PollBackoffMin, pollBackoffMin)
	def(&t.PollBackoffMax, pollBackoffMax)
	def(&t.SendRetry, time.Second)
	def(&t.SendRepass, sendRepass)
	def(&t.MaxConversations, DefaultMaxConversations)
	def(&t.MaxQueue, DefaultMaxQueue)
	def(&t.MaxOpen, DefaultMaxOpen)
	def(&t.MaxQueuedBytes, DefaultMaxQueuedBytes)
	return t
}

// OwnerLimit is an owner's turn limit for a tools.max_timeout_seconds of
// maxTool: max(30 minutes, maxTool + 5 minutes).
func OwnerLimit(maxTool time.Duration) time.Duration {
	return max(OwnerTurnFloor, maxTool+OwnerTurnMargin)
}

// bridge is one running account.
type bridge struct {
	account  string
	creds    Credentials
	settings Settings
	// workspace is the sessions' directory (settings or the daemon's).
	workspace string
	client    *Client
	store     *store.Store
	daemon    Daemon
	clean     *Sanitizer
	log       *slog.Logger
	now       func() time.Time
	tune      Tuning
	report    reporter

	sem  chan struct{}
	wake chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex
	convs map[convKey]*conv
	load  Load
}

// Load is what a bridge holds in memory, now and at its peak since it
// started, and how many messages it refused for a bound.
type Load struct {
	// Conversations are the conversations kept (each may hold a session).
	Conversations int
	// Queued are the messages waiting behind running turns; QueuedBytes
	// the text of those and of the messages being answered.
	Queued      int
	QueuedBytes int
	// Peak values since the bridge started; PeakQueue is the most
	// messages one conversation held (waiting or being answered).
	PeakConversations int
	PeakQueue         int
	PeakQueuedBytes   int
	// Busy counts the messages answered with the busy reply, TooLong
	// those whose text alone exceeded the bytes bound.
	Busy    int
	TooLong int
}

// reporter receives the bridge's state changes.
type reporter interface {
	state(st string)
	polled(at time.Time)
	failure(msg string)
	loaded(l Load)
}

type convKey struct{ group, user string }

// conv is one conversation: its queue of claimed messages and its session.
type conv struct {
	key   convKey
	queue []Message
	// held counts the conversation's messages from their dispatch to the
	// end of their turn: those queued and the one being answered.
	held    int
	running bool
	sess    Session
	noTools bool
	used    time.Time
}

// toolsFor says whether a message's sender gets a session with tools: the
// owner, in a direct chat, of an account whose remote_tools is "owner".
func (b *bridge) toolsFor(m Message) bool {
	return b.settings.RemoteTools == RemoteToolsOwner && b.creds.UserID != "" && m.GroupID == "" && m.From == b.creds.UserID
}

func (b *bridge) turnLimit(tools bool) time.Duration {
	if tools {
		return b.tune.OwnerLimit
	}
	return b.tune.ToolFreeLimit
}

// run is the account's life: bind the state to the identity, recover what
// a previous run left, then poll until ctx ends. An error return is a
// crash (the supervisor restarts it after a backoff).
func (b *bridge) run(ctx context.Context) error {
	b.sem = make(chan struct{}, b.tune.MaxConversations)
	b.wake = make(chan struct{}, 1)
	b.convs = map[convKey]*conv{}
	if err := b.store.BridgeBind(ctx, b.account, b.creds.Fingerprint()); err != nil {
		return err
	}
	st, err := b.store.BridgeState(ctx, b.account)
	if err != nil {
		return err
	}
	// A claim left by a previous run is never run again: its sender is
	// told to resend.
	var restarted []store.BridgeCompletion
	for _, c := range st.Claims {
		restarted = append(restarted, store.BridgeCompletion{MessageID: c.MessageID,
			Chunks: []store.BridgeChunk{{N: 0, ClientID: "scv-" + uuid.NewString(), Text: textRestarted}}})
		b.log.Info("clawbot message interrupted by a restart", "account", b.account, "message", c.MessageID)
	}
	if err := b.store.BridgeCompleteAll(ctx, b.account, restarted); err != nil {
		return err
	}
	defer b.stopConversations()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.sendLoop(runCtx) }()
	go func() { defer b.wg.Done(); b.sweepLoop(runCtx) }()
	b.signal()
	err = b.pollLoop(runCtx, st.Cursor)
	cancel()
	b.wg.Wait()
	return err
}

// pollLoop polls until ctx ends; it returns an error only when the store
// fails (nothing can be claimed then).
func (b *bridge) pollLoop(ctx context.Context, cursor string) error {
	wait := time.Duration(0)
	for ctx.Err() == nil {
		up, err := b.client.GetUpdates(ctx, cursor)
		if err == nil && len(up.Messages) > store.BridgeMaxBatch {
			err = fmt.Errorf("getupdates returned %d messages, more than %d: the batch is refused", len(up.Messages), store.BridgeMaxBatch)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			wait = min(max(wait*2, b.tune.PollBackoffMin), b.tune.PollBackoffMax)
			var ae *APIError
			if errors.As(err, &ae) && ae.SessionExpired() {
				wait = b.tune.PollBackoffMax
			}
			b.report.state(StateDisconnected)
			b.report.failure(err.Error())
			b.log.Warn("clawbot poll failed", "account", b.account, "err", err, "retry_in", wait)
			if !sleep(ctx, wait) {
				return nil
			}
			continue
		}
		if up.TimedOut {
			continue
		}
		wait = 0
		b.report.state(StateConnected)
		b.report.polled(b.now())
		if err := b.accept(ctx, up); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store a polled batch: %w", err)
		}
		if up.Cursor != "" {
			cursor = up.Cursor
		}
	}
	return nil
}

// accept stores a batch (seen ids, claims, cursor in one transaction),
// then hands the claimed messages to their conversations.
func (b *bridge) accept(ctx context.Context, up Updates) error {
	batch := store.BridgeBatch{Cursor: up.Cursor}
	msgs := map[string]Message{}
	for _, raw := range up.Messages {
		m := ParseMessage(raw)
		if m.ID == "" {
			b.log.Debug("clawbot message without a usable id ignored", "account", b.account)
			continue
		}
		batch.Messages = append(batch.Messages, store.BridgeMessage{ID: m.ID, Claim: m.Accept, Recipient: m.From, ContextToken: m.ContextToken, GroupID: m.GroupID})
		if m.Accept {
			if _, dup := msgs[m.ID]; !dup {
				msgs[m.ID] = m
			}
		}
	}
	claims, err := b.store.BridgeAccept(ctx, b.account, batch)
	if err != nil {
		return err
	}
	// A message past a bound is answered at once, never held: its busy
	// replies end their claims in one transaction.
	var refused []store.BridgeCompletion
	var evicted []*conv
	for _, c := range claims {
		text, gone := b.dispatch(ctx, msgs[c.MessageID])
		evicted = append(evicted, gone...)
		if text != "" {
			refused = append(refused, store.BridgeCompletion{MessageID: c.MessageID,
				Chunks: []store.BridgeChunk{{N: 0, ClientID: "scv-" + uuid.NewString(), Text: text}}})
		}
	}
	for _, c := range evicted {
		b.dropSession(c) // its session stays recorded: the sender's next message resumes it
	}
	b.reportLoad()
	if len(refused) == 0 {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer cancel()
	if err := b.store.BridgeCompleteAll(sctx, b.account, refused); err != nil {
		return fmt.Errorf("store busy replies: %w", err)
	}
	b.log.Info("clawbot refused messages past its bounds", "account", b.account, "messages", len(refused))
	b.signal()
	return nil
}

// reportLoad hands the bridge's load to the status.
func (b *bridge) reportLoad() {
	b.mu.Lock()
	l := b.load
	b.mu.Unlock()
	b.report.loaded(l)
}

// dispatch queues a claimed message on its conversation and starts the
// conversation's worker when it is idle. A message past a bound is not
// queued: dispatch returns the reply it gets instead. To make room for a
// new conversation it forgets the least recently used idle one and
// returns it (its session is still open; the caller closes it).
func (b *bridge) dispatch(ctx context.Context, m Message) (refusal string, evicted []*conv) {
	key := convKey{group: m.GroupID, user: m.From}
	size := len(m.Text)
	b.mu.Lock()
	defer b.mu.Unlock()
	if size > b.tune.MaxQueuedBytes {
		b.load.TooLong++
		return textMessageTooLong, nil
	}
	if b.load.QueuedBytes+size > b.tune.MaxQueuedBytes {
		b.load.Busy++
		return textBusy, nil
	}
	c := b.convs[key]
	if c == nil {
		if len(b.convs) >= b.tune.MaxOpen {
			v := b.idlest()
			if v == nil {
				b.load.Busy++
				return textBusy, nil
			}
			delete(b.convs, v.key)
			evicted = append(evicted, v)
		}
		c = &conv{key: key, used: b.now()}
		b.convs[key] = c
	} else if c.held >= b.tune.MaxQueue {
		b.load.Busy++
		return textBusy, nil
	}
	c.queue = append(c.queue, m)
	c.held++
	b.load.QueuedBytes += size
	b.load.Queued++
	b.load.Conversations = len(b.convs)
	b.load.PeakQueuedBytes = max(b.load.PeakQueuedBytes, b.load.QueuedBytes)
	b.load.PeakQueue = max(b.load.PeakQueue, c.held)
	b.load.PeakConversations = max(b.load.PeakConversations, len(b.convs))
	if c.running {
		return "", evicted
	}
	c.running = true
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.work(ctx, c)
	}()
	return "", evicted
}

// idlest is the least recently used conversation with no turn running
// and nothing queued, or nil. Called with mu held.
func (b *bridge) idlest() *conv {
	var v *conv
	for _, c := range b.convs {
		if !c.running && c.held == 0 && (v == nil || c.used.Before(v.used)) {
			v = c
		}
	}
	return v
}

// work runs a conversation's queued messages in order, one turn at a time
// and at most MaxConversations conversations of the account at once.
func (b *bridge) work(ctx context.Context, c *conv) {
	for {
		b.mu.Lock()
		if len(c.queue) == 0 || ctx.Err() != nil {
			for _, m := range c.queue {
				b.load.QueuedBytes -= len(m.Text)
			}
			b.load.Queued -= len(c.queue)
			c.held -= len(c.queue)
			c.queue = nil
			c.running = false
			b.mu.Unlock()
			return
		}
		m := c.queue[0]
		c.queue[0] = Message{} // the text is released with the turn, not the array
		c.queue = c.queue[1:]
		b.load.Queued--
		b.mu.Unlock()
		select {
		case b.sem <- struct{}{}:
			b.handle(ctx, c, m)
			<-b.sem
		case <-ctx.Done():
		}
		b.mu.Lock()
		b.load.QueuedBytes -= len(m.Text)
		c.held--
		l := b.load
		b.mu.Unlock()
		b.report.loaded(l)
	}
}

// handle answers one claimed message. When ctx ends first the claim is
// left as it is: the next start tells the sender to resend.
func (b *bridge) handle(ctx context.Context, c *conv, m Message) {
	tools := b.toolsFor(m)
	reply := func(texts ...string) {
		if err := b.complete(ctx, m.ID, texts); err != nil {
			b.log.Error("clawbot could not store a reply", "account", b.account, "message", m.ID, "err", err)
			return
		}
		b.signal()
	}
	sess, err := b.session(ctx, c, tools)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("clawbot could not open a session", "account", b.account, "err", err)
		reply(textNoSession)
		return
	}
	tctx, cancel := context.WithTimeout(ctx, b.turnLimit(tools))
	out, err := sess.Run(tctx, m.Text, tools)
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded)
	cancel()
	if ctx.Err() != nil {
		return // stopping: the claim stays for the next start
	}
	b.touch(ctx, c)
	switch {
	case err != nil:
		b.log.Warn("clawbot turn lost its session", "account", b.account, "err", err)
		b.dropSession(c)
		reply(textFailed)
	case out.State == TurnCompleted:
		chunks := Split(b.clean.Clean(out.Answer))
		if len(chunks) == 0 {
			chunks = []string{textEmpty}
		}
		reply(chunks...)
	case out.State == TurnFailed:
		b.log.Info("clawbot turn failed", "account", b.account, "code", out.Code)
		reply(failureText(out.Code))
	case timedOut:
		reply(textTimedOut)
	default:
		reply(textCancelled)
	}
}

// session returns the conversation's open session, resuming the recorded
// one or starting a new one when needed. A session of the other authority
// is never reused.
func (b *bridge) session(ctx context.Context, c *conv, tools bool) (Session, error) {
	if c.sess != nil && c.noTools == !tools {
		return c.sess, nil
	}
	b.dropSession(c)
	spec := SessionSpec{Workspace: b.workspace, NoTools: !tools}
	rec, err := b.store.BridgeSession(ctx, b.account, c.key.group, c.key.user)
	switch {
	case err == nil && rec.NoTools == !tools && b.now().Sub(rec.Used) < b.tune.IdleTimeout:
		spec.Resume = rec.SessionID
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	sess, err := b.daemon.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	if spec.Resume != "" && !sess.Resumed() {
		b.log.Info("clawbot started a new session: the recorded one could not be resumed", "account", b.account, "session", spec.Resume)
	}
	c.sess, c.noTools = sess, !tools
	b.touch(ctx, c)
	return sess, nil
}

// touch records that the conversation was used now.
func (b *bridge) touch(ctx context.Context, c *conv) {
	now := b.now()
	b.mu.Lock()
	c.used = now
	b.mu.Unlock()
	if c.sess == nil {
		return
	}
	if err := b.store.BridgeSetSession(ctx, b.account, store.BridgeSession{GroupID: c.key.group, UserID: c.key.user, SessionID: c.sess.ID(), NoTools: c.noTools, Used: now}); err != nil {
		b.log.Warn("clawbot could not record a session", "account", b.account, "err", err)
	}
}

func (b *bridge) dropSession(c *conv) {
	if c.sess != nil {
		c.sess.Close()
		c.sess = nil
	}
}

// sweepLoop closes the sessions of conversations idle for IdleTimeout and
// forgets them.
func (b *bridge) sweepLoop(ctx context.Context) {
	t := time.NewTicker(b.tune.IdleSweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var idle []*conv
		b.mu.Lock()
		for k, c := range b.convs {
			if !c.running && b.now().Sub(c.used) >= b.tune.IdleTimeout {
				delete(b.convs, k)
				idle = append(idle, c)
			}
		}
		b.load.Conversations = len(b.convs)
		b.mu.Unlock()
		for _, c := range idle {
			b.dropSession(c)
			if err := b.store.BridgeDropSession(ctx, b.account, c.key.group, c.key.user); err != nil && ctx.Err() == nil {
				b.log.Warn("clawbot could not forget an idle session", "account", b.account, "err", err)
			}
			b.log.Debug("clawbot dropped an idle conversation", "account", b.account)
		}
	}
}

// stopConversations closes every open session (the bridge stops; its
// goroutines have ended).
func (b *bridge) stopConversations() {
	b.mu.Lock()
	convs := b.convs
	b.convs = map[convKey]*conv{}
	b.mu.Unlock()
	for _, c := range convs {
		b.dropSession(c)
	}
}

// complete turns message id's claim into a pending reply of texts, each
// chunk with its own client id; it must finish even while the bridge
// stops.
func (b *bridge) complete(ctx context.Context, id string, texts []string) error {
	chunks := make([]store.BridgeChunk, len(texts))
	for i, t := range texts {
		chunks[i] = store.BridgeChunk{N: i, ClientID: "scv-" + uuid.NewString(), Text: t}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer cancel()
	return b.store.BridgeComplete(sctx, b.account, id, chunks)
}

func (b *bridge) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// sendLoop sends pending replies, oldest first, each reply's chunks in
// order, until ctx ends.
func (b *bridge) sendLoop(ctx context.Context) {
	failures := map[string]int{}
	for {
		left := b.sendPass(ctx, failures)
		var again <-chan time.Time
		if left {
			again = time.After(b.tune.SendRepass)
		}
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		case <-again:
		}
	}
}

// sendPass tries every pending reply once; it reports whether some were
// left pending by retryable failures.
func (b *bridge) sendPass(ctx context.Context, failures map[string]int) bool {
	st, err := b.store.BridgeState(ctx, b.account)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error("clawbot could not read pending replies", "account", b.account, "err", err)
		}
		return true
	}
	left := false
	for _, r := range st.Replies {
		if ctx.Err() != nil {
			return true
		}
		if !b.sendReply(ctx, r, failures) {
			left = true
		}
	}
	return left
}

// sendReply sends the chunks of one reply; false leaves it pending.
func (b *bridge) sendReply(ctx context.Context, r store.BridgeReply, failures map[string]int) bool {
	for _, c := range r.Chunks {
		err := b.sendChunk(ctx, r, c)
		switch {
		case err == nil:
			if err := b.store.BridgeChunkSent(context.WithoutCancel(ctx), b.account, r.MessageID, c.N); err != nil {
				b.log.Error("clawbot could not record a sent chunk", "account", b.account, "err", err)
				return false
			}
			continue
		case ctx.Err() != nil:
			return false
		case Retryable(err) && failures[r.MessageID]+1 < maxSendFailures:
			failures[r.MessageID]++
			b.log.Warn("clawbot send failed; the reply stays pending", "account", b.account, "message", r.MessageID, "err", err)
			return false
		}
		// A final refusal (or too many failures): the rest of this reply
		// is dropped, the message counts as handled.
		b.log.Warn("clawbot reply dropped", "account", b.account, "message", r.MessageID, "err", err)
		delete(failures, r.MessageID)
		if err := b.store.BridgeDropReply(context.WithoutCancel(ctx), b.account, r.MessageID); err != nil {
			b.log.Error("clawbot could not drop a reply", "account", b.account, "err", err)
		}
		return true
	}
	delete(failures, r.MessageID)
	return true
}

// sendChunk sends one chunk, retrying retryable failures with a doubling
// wait up to sendAttempts times, always under the chunk's client id.
func (b *bridge) sendChunk(ctx context.Context, r store.BridgeReply, c store.BridgeChunk) error {
	wait := b.tune.SendRetry
	var err error
	for attempt := 1; ; attempt++ {
		err = b.client.SendMessage(ctx, OutMessage{To: r.Recipient, ClientID: c.ClientID, ContextToken: r.ContextToken, Text: c.Text})
		if err == nil || !Retryable(err) || attempt == sendAttempts || ctx.Err() != nil {
			return err
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		wait = min(wait*2, b.tune.PollBackoffMax)
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
