package clawbot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

// turnRec is one turn the fake daemon ran.
type turnRec struct {
	session, prompt string
	grant           bool
	start, end      time.Time
}

// fakeDaemon stands in for the daemon's server: sessions and turns whose
// outcome a test decides.
type fakeDaemon struct {
	// reply decides a turn; nil answers "echo: <prompt>".
	reply func(ctx context.Context, sess *fakeSession, prompt string, grant bool) (clawbot.Outcome, error)
	// resumable lets Open resume a recorded session.
	resumable bool

	mu         sync.Mutex
	n          int
	specs      []clawbot.SessionSpec
	turns      []turnRec
	closed     []string
	running    int
	maxRunning int
}

type fakeSession struct {
	d       *fakeDaemon
	id      string
	resumed bool
}

func (d *fakeDaemon) Open(ctx context.Context, spec clawbot.SessionSpec) (clawbot.Session, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.specs = append(d.specs, spec)
	if spec.Resume != "" && d.resumable {
		return &fakeSession{d: d, id: spec.Resume, resumed: true}, nil
	}
	d.n++
	return &fakeSession{d: d, id: fmt.Sprint("s", d.n)}, nil
}

func (s *fakeSession) ID() string    { return s.id }
func (s *fakeSession) Resumed() bool { return s.resumed }
func (s *fakeSession) Close() {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	s.d.closed = append(s.d.closed, s.id)
}

func (s *fakeSession) Run(ctx context.Context, prompt string, grant bool) (clawbot.Outcome, error) {
	d := s.d
	d.mu.Lock()
	d.running++
	d.maxRunning = max(d.maxRunning, d.running)
	rec := turnRec{session: s.id, prompt: prompt, grant: grant, start: time.Now()}
	d.mu.Unlock()
	var out clawbot.Outcome
	var err error
	if d.reply != nil {
		out, err = d.reply(ctx, s, prompt, grant)
	} else {
		out = clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "echo: " + prompt}
	}
	d.mu.Lock()
	d.running--
	rec.end = time.Now()
	d.turns = append(d.turns, rec)
	d.mu.Unlock()
	return out, err
}

func (d *fakeDaemon) Turns() []turnRec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]turnRec(nil), d.turns...)
}

func (d *fakeDaemon) Specs() []clawbot.SessionSpec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]clawbot.SessionSpec(nil), d.specs...)
}

// harness is a supervisor over a fake iLink server and a fake daemon.
type harness struct {
	t      testing.TB
	layout paths.Layout
	files  clawbot.Files
	store  *store.Store
	fake   *ilinktest.Server
	daemon clawbot.Daemon
	fd     *fakeDaemon
	sup    *clawbot.Supervisor
	ws     string
	opts   clawbot.Options
	cancel context.CancelFunc
	done   chan struct{}
}

const (
	ownerID = "owner@im.wechat"
	botID   = "bot@im.bot"
)

// newHarness makes a home with account "default" logged in at the fake
// server (owner ownerID) and a supervisor with short timings. It does not
// start the supervisor.
func newHarness(t testing.TB) *harness {
	t.Helper()
	root := testutil.TempDir(t) // canonical: the supervisor resolves the workspace
	h := &harness{t: t, layout: paths.Layout{Home: filepath.Join(root, "home")}, fake: ilinktest.New(t), fd: &fakeDaemon{}, ws: filepath.Join(root, "ws")}
	h.files = clawbot.Files{Layout: h.layout}
	h.daemon = h.fd
	for _, d := range []string{h.layout.Home, h.ws} {
		if err := paths.EnsureDir(d); err != nil {
			t.Fatal(err)
		}
	}
	// The daemon's store: it holds the sessions of its server too.
	st, err := store.Open(t.Context(), store.Options{Path: h.layout.Database(),
		Holder: store.Holder{Instance: h.layout.Home, PID: os.Getpid(), Name: "daemon"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.store = st
	h.login("default", ownerID)
	h.opts = clawbot.Options{
		Layout: h.layout, Store: st, Workspace: h.ws, Secrets: []string{"sk-configured-key-1"},
		ReconcileEvery: 50 * time.Millisecond, BackoffMin: 100 * time.Millisecond, BackoffMax: 400 * time.Millisecond,
		Tuning: clawbot.Tuning{PollTimeout: 3 * time.Second, SendRetry: 5 * time.Millisecond, SendRepass: 100 * time.Millisecond,
			IdleSweep: 20 * time.Millisecond, PollBackoffMin: 20 * time.Millisecond, PollBackoffMax: 100 * time.Millisecond},
	}
	return h
}

func (h *harness) login(account, owner string) {
	h.t.Helper()
	if err := h.files.SaveCredentials(account, clawbot.Credentials{Token: clawbot.Token("tok-" + account), BotID: botID, UserID: owner, BaseURL: h.fake.URL()}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) settings(account string, s clawbot.Settings) {
	h.t.Helper()
	if err := h.files.SaveSettings(account, s); err != nil {
		h.t.Fatal(err)
	}
}

// start runs the supervisor until the test ends.
func (h *harness) start() {
	h.t.Helper()
	h.opts.Daemon = h.daemon
	h.sup = clawbot.NewSupervisor(h.opts)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() { defer close(h.done); h.sup.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// stop stops the supervisor and waits for it.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		h.t.Error("the supervisor did not stop within 20 s")
	}
	h.cancel = nil
}

func (h *harness) status(account string) clawbot.AccountStatus {
	st, _ := h.sup.Account(account)
	return st
}

// waitFor polls cond for up to 10 s.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; status %+v", what, h.sup.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) waitState(account, state string) {
	h.t.Helper()
	h.waitFor(account+" "+state, func() bool { return h.status(account).State == state })
}

// waitSent waits until n sendmessage requests arrived and returns them.
// The bound is generous for the whole suite under -race on two cores. (A
// reply after a daemon restart once seemed to need more than 10 s; it was
// a queued batch swallowed by the stopped supervisor's last poll, which
// no wait would have found: a message that must survive a restart is
// posted, see TestSessionResumedAfterDaemonRestart.)
func (h *harness) waitSent(n int) []ilinktest.Sent {
	h.t.Helper()
	if !h.fake.WaitFor(30*time.Second, func() bool { return len(h.fake.Sent()) >= n }) {
		h.t.Fatalf("%d messages sent, want %d: %+v", len(h.fake.Sent()), n, h.fake.Sent())
	}
	return h.fake.Sent()
}

// waitIdle waits until every queued poll was served, no claim is open and
// no reply is pending.
func (h *harness) waitIdle(account string) store.BridgeState {
	h.t.Helper()
	var st store.BridgeState
	h.waitFor("the bridge to settle", func() bool {
		var err error
		st, err = h.store.BridgeState(context.Background(), account)
		return err == nil && h.fake.PendingPolls() == 0 && len(st.Claims) == 0 && len(st.Replies) == 0
	})
	return st
}

func texts(sent []ilinktest.Sent) []string {
	out := make([]string, len(sent))
	for i, s := range sent {
		out[i] = s.To + ": " + s.Text
	}
	return out
}
