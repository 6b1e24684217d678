package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

// The WeChat bridge in the real daemon, against a fake iLink server and a
// fake model in this process: durability across SIGKILL, and the commands.

const restartedText = "SCV restarted before finishing this; please resend."

// botInstance is an instance whose account "default" is logged in at a
// fake iLink server.
type botInstance struct {
	*instance
	ilink *ilinktest.Server
	model *modeltest.Server
}

func newBotInstance(t *testing.T) *botInstance {
	t.Helper()
	model := modeltest.New(t)
	b := &botInstance{instance: newInstance(t, providerConfig(model.URL())), ilink: ilinktest.New(t), model: model}
	loginBot(t, b.home, map[string]string{"bot_token": "tok-e2e-secret", "ilink_bot_id": "bot@im.bot", "ilink_user_id": "owner@im.wechat", "baseurl": b.ilink.URL()})
	return b
}

// loginBot writes the credentials of account "default" into the instance
// home, as `scv clawbot login` leaves them.
func loginBot(t testing.TB, home string, creds map[string]string) {
	t.Helper()
	dir := filepath.Join(home, "clawbot", "accounts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "default.json"), []byte(testutil.JSON(creds)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// nothingMore waits a moment for what must not happen (a message run
// again, a reply sent twice), then checks the model's requests and the
// replies sent in all.
func (b *botInstance) nothingMore(t *testing.T, requests, sent int) {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
	if n := len(b.model.Requests()); n != requests {
		t.Errorf("the model got %d requests, want %d: a claimed message ran again", n, requests)
	}
	if n := len(b.ilink.Sent()); n != sent {
		t.Errorf("%d replies sent, want %d", n, sent)
	}
}

// settled reports that the account has no open claim and no pending
// reply in the store (read beside the running daemon).
func (b *botInstance) settled(t *testing.T) bool {
	t.Helper()
	st, err := store.Open(t.Context(), store.Options{Path: filepath.Join(b.home, "state", "scv.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.BridgeState(t.Context(), "default")
	return err == nil && s.Cursor != "" && len(s.Claims) == 0 && len(s.Replies) == 0
}

// kill SIGKILLs the daemon's process group and waits for it.
func (d *daemonProc) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !d.wait(10 * time.Second) {
		t.Fatal("the killed daemon was not reaped")
	}
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (b *botInstance) waitSent(t *testing.T, n int) []ilinktest.Sent {
	t.Helper()
	if !b.ilink.WaitFor(30*time.Second, func() bool { return len(b.ilink.Sent()) >= n }) {
		t.Fatalf("%d messages sent, want %d: %+v", len(b.ilink.Sent()), n, b.ilink.Sent())
	}
	return b.ilink.Sent()
}

// (a) SIGKILL after a claim and before the turn ends: after the restart
// the message is not run again; its sender is asked to resend.
func TestClawbotKillDuringTurn(t *testing.T) {
	b := newBotInstance(t)
	b.model.Script(modeltest.Step{Hang: true})
	b.ilink.Post(ilinktest.Text(1, "alice", "a long question"))
	d := b.startDaemon(b.env)
	waitFor(t, "the turn to reach the model", 30*time.Second, func() bool { return len(b.model.Requests()) == 1 })
	d.kill(t)

	b.startDaemon(b.env)
	sent := b.waitSent(t, 1)
	if sent[0].Text != restartedText || sent[0].To != "alice" || sent[0].ContextToken != "ctx-1" {
		t.Errorf("reply after the restart = %+v", sent[0])
	}
	b.nothingMore(t, 1, 1)
}

// (b) SIGKILL after the reply is stored and before it is delivered: after
// the restart it is sent under the same client id, and the turn is not
// run again.
func TestClawbotKillBeforeReplySent(t *testing.T) {
	b := newBotInstance(t)
	b.model.Script(modeltest.Text("the answer"))
	answers := make([]ilinktest.Answer, 100)
	for i := range answers {
		answers[i] = ilinktest.Answer{Status: 503}
	}
	b.ilink.SetSendAnswers(answers...)
	b.ilink.Post(ilinktest.Text(1, "alice", "question"))
	d := b.startDaemon(b.env)
	first := b.waitSent(t, 1)[0]
	d.kill(t)

	b.ilink.SetSendAnswers() // deliveries succeed from now on
	n := len(b.ilink.Sent())
	b.startDaemon(b.env)
	sent := b.waitSent(t, n+1)
	last := sent[len(sent)-1]
	if last.Text != "the answer" || last.ClientID != first.ClientID || first.ClientID == "" {
		t.Errorf("delivery after the restart = %+v, want the stored reply under client id %q", last, first.ClientID)
	}
	b.nothingMore(t, 1, n+1)
}

// (c) SIGKILL between batches: polling resumes from the stored cursor, so
// no unclaimed message is skipped and no claimed one is run again (even
// when the service delivers it again).
func TestClawbotKillBetweenBatches(t *testing.T) {
	b := newBotInstance(t)
	b.model.Script(modeltest.Text("one"))
	b.model.Script(modeltest.Text("two"))
	b.ilink.Post(ilinktest.Text(1, "alice", "first"))
	d := b.startDaemon(b.env)
	b.waitSent(t, 1)
	waitFor(t, "the batch to be settled and the next poll to wait", 30*time.Second, func() bool {
		cs := b.ilink.Cursors()
		return b.settled(t) && len(cs) > 0 && cs[len(cs)-1] == "pos-1"
	})
	d.kill(t)

	// While the daemon is down the service gets a new message, and
	// delivers the first one again.
	polls := len(b.ilink.Cursors())
	b.ilink.Post(ilinktest.Text(2, "alice", "second"), ilinktest.Text(1, "alice", "first"))
	b.startDaemon(b.env)
	sent := b.waitSent(t, 2)
	if sent[1].Text != "two" || sent[1].ContextToken != "ctx-2" {
		t.Errorf("reply to the second message = %+v", sent[1])
	}
	if cs := b.ilink.Cursors(); len(cs) <= polls || cs[polls] != "pos-1" {
		t.Errorf("polls %v: the first after the restart (index %d) must use the stored cursor pos-1", cs, polls)
	}
	b.nothingMore(t, 2, 2)
}

// The commands against the running daemon: status, run with owner tools,
// reload, stop and logout; and the daemon's own status lists the bridge.
func TestClawbotCommands(t *testing.T) {
	b := newBotInstance(t)
	b.startDaemon(b.env)
	waitFor(t, "the bridge to connect", 30*time.Second, func() bool {
		r := b.run(b.env, "", "clawbot", "status")
		return strings.Contains(r.stdout, "state:        connected")
	})
	r := b.run(b.env, "", "clawbot", "status", "--json")
	var st struct {
		Daemon   struct{ Running bool }
		Accounts []struct {
			Account, BotID, State, RemoteTools, LastPoll string `json:",omitempty"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || !st.Daemon.Running || len(st.Accounts) != 1 {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "tok-e2e-secret") {
		t.Error("status printed the token")
	}
	if r := b.run(b.env, "", "status"); !strings.Contains(r.stdout, "clawbot default: connected") {
		t.Errorf("scv status:\n%s", r.stdout)
	}
	r = b.run(b.env, "", "clawbot", "run", "--remote-tools", "owner", "--workspace", b.ws)
	if r.code != 0 || !strings.Contains(r.stdout, "remote tools: owner (applied by the running bridge)") {
		t.Errorf("run --remote-tools owner: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := b.run(b.env, "", "reload"); r.code != 0 || !strings.Contains(r.stdout, "clawbot default:") {
		t.Errorf("reload: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := b.run(b.env, "", "clawbot", "stop"); r.code != 0 {
		t.Errorf("stop: %s", r.stderr)
	}
	if r := b.run(b.env, "", "clawbot", "status"); !strings.Contains(r.stdout, "state:        disabled") {
		t.Errorf("status after stop:\n%s", r.stdout)
	}
	if r := b.run(b.env, "", "clawbot", "logout"); r.code != 0 || !strings.Contains(r.stdout, "logged out") {
		t.Errorf("logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(b.home, "clawbot", "accounts", "default.json")); !os.IsNotExist(err) {
		t.Errorf("credentials after logout: %v", err)
	}
	if r := b.run(b.env, "", "clawbot", "status"); !strings.Contains(r.stdout, "no clawbot accounts") {
		t.Errorf("status after logout:\n%s", r.stdout)
	}
}

// SIGTERM cancels and joins the bridge, with a turn running, within the
// daemon's bounded shutdown; the claim stays for the next start.
func TestClawbotStopsWithTheDaemon(t *testing.T) {
	b := newBotInstance(t)
	b.model.Script(modeltest.Step{Hang: true})
	b.model.Script(modeltest.Text("unused"))
	b.ilink.Post(ilinktest.Text(1, "alice", "a long question"))
	d := b.startDaemon(b.env)
	waitFor(t, "the turn to reach the model", 30*time.Second, func() bool { return len(b.model.Requests()) == 1 })
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !d.wait(10 * time.Second) {
		t.Fatal("the daemon did not stop within 10 s of SIGTERM")
	}
	if took := time.Since(start); took > 5*time.Second || d.exitCode() != 0 {
		t.Errorf("daemon stopped after %v with exit code %d; want a clean exit within 5 s", took, d.exitCode())
	}
	b.startDaemon(b.env)
	if sent := b.waitSent(t, 1); sent[0].Text != restartedText {
		t.Errorf("reply after the restart = %q", sent[0].Text)
	}
	if n := len(b.model.Requests()); n != 1 {
		t.Errorf("the model got %d requests", n)
	}
}
