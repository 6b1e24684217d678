package clawbot_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/store"
)

func ptr[T any](v T) *T { return &v }

// faultyStore gives the supervisor a store whose write op fails with msg
// until heal is called.
func (h *harness) faultyStore(op, msg string) (heal func()) {
	h.t.Helper()
	var mu sync.Mutex
	failing := true
	st, err := store.Open(h.t.Context(), store.Options{Path: h.layout.Database(), Fault: func(o string) error {
		mu.Lock()
		defer mu.Unlock()
		if failing && o == op {
			return errors.New(msg)
		}
		return nil
	}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	h.opts.Store = st
	return func() {
		mu.Lock()
		defer mu.Unlock()
		failing = false
	}
}

// `connected` needs an authenticated, validated getupdates: answers that
// fail or do not validate leave the bridge disconnected.
func TestConnectedOnlyAfterValidatedPoll(t *testing.T) {
	h := newHarness(t)
	h.fake.SetIdleHold(10 * time.Second) // no empty batch answers by itself
	h.fake.Poll(ilinktest.Answer{Raw: "<html>gateway</html>"})
	h.fake.Poll(ilinktest.Answer{JSON: map[string]any{"ret": -1, "errmsg": "busy", "msgs": []any{}, "get_updates_buf": "x"}})
	h.fake.Poll(ilinktest.Answer{JSON: map[string]any{"get_updates_buf": "x"}})
	h.fake.Poll(ilinktest.Answer{Status: 503})
	h.start()
	h.waitFor("the bad answers to be served", func() bool { return h.fake.PendingPolls() == 0 })
	h.waitState("default", clawbot.StateDisconnected)
	time.Sleep(50 * time.Millisecond)
	st := h.status("default")
	if st.State == clawbot.StateConnected || !st.LastPoll.IsZero() || !strings.Contains(st.LastError, "HTTP 503") {
		t.Fatalf("after answers that do not validate: %+v", st)
	}
	h.fake.Batch("c1")
	h.waitState("default", clawbot.StateConnected)
	if st := h.status("default"); st.LastPoll.IsZero() || st.BotID != botID || st.OwnerUserID != ownerID || !st.Enabled {
		t.Errorf("connected status = %+v", st)
	}
}

// -14 (session expired) pauses polling and shows in the status.
func TestSessionExpiredShowsInStatus(t *testing.T) {
	h := newHarness(t)
	h.fake.Poll(ilinktest.Answer{JSON: map[string]any{"ret": -14, "errmsg": "session timeout"}})
	h.start()
	h.waitFor("the expiry to show", func() bool { return strings.Contains(h.status("default").LastError, "log in again") })
	if st := h.status("default"); st.State != clawbot.StateDisconnected {
		t.Errorf("state = %s, want disconnected", st.State)
	}
	// It waits the longest poll backoff before trying again.
	start := time.Now()
	h.waitFor("the next poll", func() bool { return len(h.fake.Cursors()) >= 2 })
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("polled again after %v; want the maximum backoff (100ms)", d)
	}
}

func TestStopRunAndReload(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.waitState("default", clawbot.StateConnected)
	ctx := t.Context()

	st, err := h.sup.Configure(ctx, "default", clawbot.Change{Enabled: ptr(false)})
	if err != nil || st.State != clawbot.StateDisabled || st.Enabled {
		t.Fatalf("stop: %+v, %v", st, err)
	}
	n := len(h.fake.Requests())
	time.Sleep(300 * time.Millisecond)
	if m := len(h.fake.Requests()); m != n {
		t.Errorf("%d requests after the bridge was disabled", m-n)
	}
	// Disabled survives a restart of the supervisor (it is saved).
	if set, err := h.files.Settings("default"); err != nil || set.Enabled {
		t.Errorf("saved settings = %+v, %v", set, err)
	}

	st, err = h.sup.Configure(ctx, "default", clawbot.Change{Enabled: ptr(true), RemoteTools: clawbot.RemoteToolsOwner, Workspace: h.ws})
	if err != nil || st.State != clawbot.StateStarting || st.RemoteTools != clawbot.RemoteToolsOwner || st.Workspace != h.ws {
		t.Fatalf("run --remote-tools owner: %+v, %v", st, err)
	}
	h.waitState("default", clawbot.StateConnected)

	// A rotated token is picked up by a reload.
	h.fake.SetIdleHold(50 * time.Millisecond)
	if err := h.files.SaveCredentials("default", clawbot.Credentials{Token: "tok-rotated", BotID: botID, UserID: ownerID, BaseURL: h.fake.URL()}); err != nil {
		t.Fatal(err)
	}
	if err := h.sup.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	h.waitFor("a poll with the new token", func() bool {
		r := h.fake.Requests()
		return r[len(r)-1].Header.Get("Authorization") == "Bearer tok-rotated"
	})
	if st := h.status("default"); st.Restarts != 0 {
		t.Errorf("a replacement counted as a restart: %+v", st)
	}

	// Validation of run's settings.
	for _, c := range []struct {
		account string
		ch      clawbot.Change
		err     string
	}{
		{"default", clawbot.Change{RemoteTools: "all"}, `remote_tools "all"`},
		{"default", clawbot.Change{Workspace: "relative"}, "absolute"},
		{"default", clawbot.Change{Workspace: filepath.Join(h.ws, "missing")}, "no such file"},
		{"nobody", clawbot.Change{Enabled: ptr(true)}, "not logged in"},
		{"bad name", clawbot.Change{}, "ASCII letters"},
	} {
		if _, err := h.sup.Configure(ctx, c.account, c.ch); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Configure(%s, %+v) = %v, want %q", c.account, c.ch, err, c.err)
		}
	}
}

// A replacement (new credentials or settings) starts only after the old
// bridge has been stopped and joined, turns included.
func TestReplacementJoinsOldInstanceFirst(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var oldEnded time.Time
	started := make(chan struct{})
	h.fd.reply = func(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
		close(started)
		<-ctx.Done()
		time.Sleep(200 * time.Millisecond) // a turn slow to cancel
		mu.Lock()
		oldEnded = time.Now()
		mu.Unlock()
		return clawbot.Outcome{State: clawbot.TurnCancelled}, nil
	}
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "long task"))
	h.start()
	<-started
	if err := h.files.SaveCredentials("default", clawbot.Credentials{Token: "tok-2", BotID: botID, UserID: ownerID, BaseURL: h.fake.URL()}); err != nil {
		t.Fatal(err)
	}
	if err := h.sup.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.waitFor("a poll of the new bridge", func() bool {
		for _, r := range h.fake.Requests() {
			if r.Header.Get("Authorization") == "Bearer tok-2" {
				return true
			}
		}
		return false
	})
	mu.Lock()
	ended := oldEnded
	mu.Unlock()
	for _, r := range h.fake.Requests() {
		if r.Header.Get("Authorization") == "Bearer tok-2" && !r.At.After(ended) {
			t.Fatalf("the new bridge polled at %v, before the old one's turn ended at %v", r.At, ended)
		}
	}
	// The interrupted message is answered by the new bridge: never run
	// again, its sender asked to resend.
	sent := h.waitSent(1)
	if sent[0].Text != "SCV restarted before finishing this; please resend." || sent[0].Header.Get("Authorization") != "Bearer tok-2" {
		t.Errorf("reply = %+v", sent[0])
	}
	if n := len(h.fd.Turns()); n != 1 {
		t.Errorf("%d turns, want 1", n)
	}
}

// A bridge that exits on its own is restarted after a backoff that
// doubles up to its bound.
func TestCrashBacksOff(t *testing.T) {
	h := newHarness(t)
	heal := h.faultyStore("accept bridge batch", "disk on fire")
	for range 10 {
		h.fake.Batch("c1", ilinktest.Text(1, "alice", "hi"))
	}
	h.start()
	var backoffs []time.Duration
	h.waitFor("three restarts", func() bool {
		s := h.status("default")
		if s.State == clawbot.StateBackoff && (len(backoffs) == 0 || backoffs[len(backoffs)-1] != s.Backoff) {
			backoffs = append(backoffs, s.Backoff)
		}
		return s.Restarts >= 3
	})
	if len(backoffs) < 3 || backoffs[0] != 100*time.Millisecond || backoffs[1] != 200*time.Millisecond || backoffs[2] != 400*time.Millisecond {
		t.Errorf("backoffs %v, want 100ms, 200ms, 400ms", backoffs)
	}
	if s := h.status("default"); !strings.Contains(s.LastError, "disk on fire") {
		t.Errorf("last error = %q", s.LastError)
	}
	heal()
	sent := h.waitSent(1)
	if sent[0].Text != "echo: hi" || len(h.fd.Turns()) != 1 {
		t.Errorf("after recovery: sent %+v, turns %+v", sent, h.fd.Turns())
	}
}

// Logout disables the account and resets remote_tools before anything is
// deleted: a logout that fails half-way leaves no tools behind.
func TestLogoutResetsRemoteToolsFirst(t *testing.T) {
	h := newHarness(t)
	h.settings("default", clawbot.Settings{Enabled: true, RemoteTools: clawbot.RemoteToolsOwner, Workspace: h.ws})
	heal := h.faultyStore("forget bridge account", "injected")
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "hi"))
	h.start()
	h.waitSent(1)
	if err := h.sup.Logout(t.Context(), "default"); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("logout with a failing store: %v", err)
	}
	set, err := h.files.Settings("default")
	if err != nil || set.Enabled || set.RemoteTools != clawbot.RemoteToolsNone {
		t.Errorf("settings after a failed logout = %+v, %v; want disabled, none", set, err)
	}
	if s := h.status("default"); s.State != clawbot.StateDisabled || s.RemoteTools != clawbot.RemoteToolsNone {
		t.Errorf("status after a failed logout = %+v", s)
	}
	if _, err := h.files.Credentials("default"); err != nil {
		t.Errorf("credentials deleted before the state: %v", err)
	}

	heal()
	if err := h.sup.Logout(t.Context(), "default"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"accounts", "settings"} {
		if _, err := os.Stat(filepath.Join(h.layout.ClawbotAccounts(), "..", p, "default.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s file left after logout: %v", p, err)
		}
	}
	if bs, err := h.store.BridgeState(context.Background(), "default"); err != nil || bs.Fingerprint != "" || bs.Cursor != "" {
		t.Errorf("delivery state after logout = %+v, %v", bs, err)
	}
	if _, known := h.sup.Account("default"); known {
		t.Error("the account is still listed after logout")
	}
	if err := h.sup.Logout(t.Context(), "default"); err == nil || !strings.Contains(err.Error(), "not logged in") {
		t.Errorf("second logout: %v", err)
	}
	// A new login starts from the defaults: tool-free.
	h.login("default", ownerID)
	if err := h.sup.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.waitState("default", clawbot.StateConnected)
	if s := h.status("default"); s.RemoteTools != clawbot.RemoteToolsNone {
		t.Errorf("remote tools after a new login = %s", s.RemoteTools)
	}
}

// Files that cannot be used put the account in `failed`; a missing
// workspace too; fixing them is picked up by the next reconcile.
func TestFailedAccounts(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(h.layout.ClawbotSettings(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.layout.ClawbotSettings(), "default.json"), []byte(`{"enabled":true,"remote":"owner"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.login("other", ownerID)
	h.settings("other", clawbot.Settings{Enabled: true, RemoteTools: clawbot.RemoteToolsNone, Workspace: filepath.Join(h.ws, "gone")})
	h.start()
	h.waitState("default", clawbot.StateFailed)
	h.waitState("other", clawbot.StateFailed)
	if s := h.status("default"); !strings.Contains(s.LastError, "unknown field") {
		t.Errorf("default: %+v", s)
	}
	if s := h.status("other"); !strings.Contains(s.LastError, "gone") {
		t.Errorf("other: %+v", s)
	}
	h.settings("default", clawbot.DefaultSettings())
	h.waitState("default", clawbot.StateConnected)
}

// The daemon's shutdown stops and joins every bridge.
func TestShutdownJoinsBridges(t *testing.T) {
	h := newHarness(t)
	h.login("second", "o2")
	h.start()
	h.waitState("default", clawbot.StateConnected)
	h.waitState("second", clawbot.StateConnected)
	h.stop()
	for _, s := range h.sup.Status() {
		if s.State != clawbot.StateStopped {
			t.Errorf("%s: %s after shutdown", s.Account, s.State)
		}
	}
}

// State bound to another identity (credentials replaced by hand) stops the
// account for good, with the reason, until the files change.
func TestStateOfAnotherIdentity(t *testing.T) {
	h := newHarness(t)
	if err := h.store.BridgeBind(context.Background(), "default", "fingerprint-of-another-bot"); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitState("default", clawbot.StateFailed)
	time.Sleep(300 * time.Millisecond) // backoff would have restarted it by now
	s := h.status("default")
	if s.State != clawbot.StateFailed || s.Restarts != 0 || !strings.Contains(s.LastError, "another identity") {
		t.Errorf("status = %+v", s)
	}
	if len(h.fake.Requests()) != 0 {
		t.Errorf("a bridge bound to another identity polled: %d requests", len(h.fake.Requests()))
	}
}
