package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// resumeFree sends m, again while the session is still busy on the
// connection just closed (the daemon releases it when it sees the close).
func resumeFree(t *testing.T, c *client.Conn, m *proto.SessionResume) (*proto.SessionResumed, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := client.CallFor[*proto.SessionResumed](t.Context(), c, m)
		var re *client.RequestError
		if !errors.As(err, &re) || re.Code != proto.ErrSessionBusy || time.Now().After(deadline) {
			return r, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// authOf lists, for each request a fake model server received, its
// Authorization header.
func authOf(fm *modeltest.Server) []string {
	var out []string
	for _, r := range fm.Requests() {
		out = append(out, r.Header.Get("Authorization"))
	}
	return out
}

// wantAuth fails unless the servers received exactly the requests listed
// (each by its Authorization), in order.
func wantAuth(t *testing.T, step string, a, b *modeltest.Server, wantA, wantB []string) {
	t.Helper()
	if got := authOf(a); strings.Join(got, ",") != strings.Join(wantA, ",") {
		t.Errorf("%s: server A received %q, want %q", step, got, wantA)
	}
	if got := authOf(b); strings.Join(got, ",") != strings.Join(wantB, ",") {
		t.Errorf("%s: server B received %q, want %q", step, got, wantB)
	}
}

// TestDaemonResumeKeepsEndpoint: a daemon whose configuration points at
// server B, started without the key or SCV_BASE_URL, runs a session a
// client started with SCV_BASE_URL=A and A's key. Every later resume —
// with the client's override, without it, after `scv stop` and a new
// daemon, and a fork — sends to A with A's key; a key for another
// endpoint is refused without any request; only an explicit override
// moves the session, and session.resumed says from where to where.
func TestDaemonResumeKeepsEndpoint(t *testing.T) {
	const keyA, keyB = "sk-for-a-11", "sk-for-b-22"
	a, b := modeltest.New(t), modeltest.New(t)
	in := newInstance(t, providerConfig(b.URL()))
	daemonEnv := in.withEnv("OPENAI_API_KEY", "SCV_BASE_URL")
	in.startDaemon(daemonEnv)
	fromA := proto.SessionStart{BaseURL: a.URL(), ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyA, ProviderKeyBaseURL: a.URL(), Origin: proto.OriginTUI}

	c := in.connect()
	a.Script(modeltest.Text("one"))
	started := in.startSession(c, fromA)
	sid := started.SessionID
	sendTurn(t, c, sid, "first")
	until(t, c, proto.EventTurnCompleted)
	wantAuth(t, "start", a, b, []string{"Bearer " + keyA}, nil)
	c.Close()

	resume := func(c *client.Conn, m *proto.SessionResume) (*proto.SessionResumed, error) {
		m.SessionID = sid
		return resumeFree(t, c, m)
	}
	turn := func(c *client.Conn, answer string) {
		t.Helper()
		a.Script(modeltest.Text(answer))
		sendTurn(t, c, sid, answer)
		until(t, c, proto.EventTurnCompleted)
		c.Close()
	}

	// The client's key alone (no override): the stored endpoint A.
	c = in.connect()
	r, err := resume(c, &proto.SessionResume{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyA, ProviderKeyBaseURL: a.URL()})
	if err != nil {
		t.Fatalf("resume with A's key: %v", err)
	}
	if r.BaseURL != a.URL() || r.PreviousBaseURL != "" {
		t.Errorf("resumed base_url %q previous %q, want %q and none", r.BaseURL, r.PreviousBaseURL, a.URL())
	}
	turn(c, "two")
	wantAuth(t, "resume without override", a, b, []string{"Bearer " + keyA, "Bearer " + keyA}, nil)

	// A key given for B never goes to A, and the session does not move
	// to B by itself: refused, nothing sent anywhere.
	c = in.connect()
	_, err = resume(c, &proto.SessionResume{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyB, ProviderKeyBaseURL: b.URL()})
	if err == nil || !strings.Contains(err.Error(), "is sent only to the endpoint it was given for") || !strings.Contains(err.Error(), a.URL()) || strings.Contains(err.Error(), keyB) {
		t.Errorf("resume with B's key: %v, want a refusal naming endpoint A", err)
	}
	// A key sent without the endpoint it is for is not used either.
	_, err = resume(c, &proto.SessionResume{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyA})
	if err == nil || !strings.Contains(err.Error(), "came without the endpoint") {
		t.Errorf("resume with an unbound key: %v, want a refusal", err)
	}
	c.Close()
	wantAuth(t, "refused resumes", a, b, []string{"Bearer " + keyA, "Bearer " + keyA}, nil)

	// A new daemon, started as before: the session still goes to A.
	if res := in.run(in.env, "", "stop"); res.code != 0 {
		t.Fatalf("scv stop: exit %d %s", res.code, res.stderr)
	}
	in.startDaemon(daemonEnv)
	c = in.connect()
	if _, err := resume(c, &proto.SessionResume{BaseURL: a.URL(), ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyA, ProviderKeyBaseURL: a.URL()}); err != nil {
		t.Fatalf("resume after a restart: %v", err)
	}
	turn(c, "three")

	// A fork keeps the source's endpoint.
	c = in.connect()
	turns, err := client.CallFor[*proto.SessionTurnsReply](t.Context(), c, &proto.SessionTurnsRequest{SessionID: sid})
	if err != nil || len(turns.Turns) != 3 {
		t.Fatalf("session.turns: %v %+v", err, turns)
	}
	f, err := client.CallFor[*proto.SessionResumed](t.Context(), c, &proto.SessionFork{SessionID: sid, TurnID: turns.Turns[1].TurnID, Origin: proto.OriginTUI,
		ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyA, ProviderKeyBaseURL: a.URL()})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	a.Script(modeltest.Text("forked"))
	sendTurn(t, c, f.SessionID, "forked")
	until(t, c, proto.EventTurnCompleted)
	c.Close()
	wantAuth(t, "restart and fork", a, b, []string{"Bearer " + keyA, "Bearer " + keyA, "Bearer " + keyA, "Bearer " + keyA}, nil)

	// An explicit override moves the session, said before any request,
	// and the move is stored: the next plain resume stays at B.
	c = in.connect()
	r, err = resume(c, &proto.SessionResume{BaseURL: b.URL(), ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyB, ProviderKeyBaseURL: b.URL()})
	if err != nil {
		t.Fatalf("resume with an override to B: %v", err)
	}
	if r.PreviousBaseURL != a.URL() || r.BaseURL != b.URL() {
		t.Errorf("moved session: previous_base_url %q base_url %q, want %q → %q", r.PreviousBaseURL, r.BaseURL, a.URL(), b.URL())
	}
	b.Script(modeltest.Text("at b"))
	sendTurn(t, c, sid, "at b")
	until(t, c, proto.EventTurnCompleted)
	c.Close()
	c = in.connect()
	if r, err = resume(c, &proto.SessionResume{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: keyB, ProviderKeyBaseURL: b.URL()}); err != nil || r.BaseURL != b.URL() || r.PreviousBaseURL != "" {
		t.Errorf("plain resume after the move: %v %+v, want base_url B unchanged", err, r)
	}
	c.Close()
	wantAuth(t, "override", a, b, []string{"Bearer " + keyA, "Bearer " + keyA, "Bearer " + keyA, "Bearer " + keyA}, []string{"Bearer " + keyB})
}

// TestDaemonKeyStaysWithItsEndpoint: the daemon's own key (for B, its
// configuration's endpoint) is not sent to an endpoint a client chose,
// neither at session.start nor when a session stored at A is resumed by a
// client without a key.
func TestDaemonKeyStaysWithItsEndpoint(t *testing.T) {
	a, b := modeltest.New(t), modeltest.New(t)
	in := newInstance(t, providerConfig(b.URL()))
	in.startDaemon(in.withEnv("OPENAI_API_KEY=sk-daemon-for-b", "SCV_BASE_URL"))
	c := in.connect()
	_, err := c.StartSession(t.Context(), proto.SessionStart{Cwd: in.ws, BaseURL: a.URL()})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY of this server is for "+b.URL()) {
		t.Errorf("session.start at A without a client key: %v, want a refusal naming the daemon key's endpoint", err)
	}
	started := in.startSession(c, proto.SessionStart{})
	b.Script(modeltest.Text("daemon key at b"))
	sendTurn(t, c, started.SessionID, "hi")
	until(t, c, proto.EventTurnCompleted)
	wantAuth(t, "daemon's own endpoint", a, b, nil, []string{"Bearer sk-daemon-for-b"})
}

// TestExecResumeKeepsEndpoint: `scv exec` with SCV_BASE_URL=A and A's key
// starts a session at A; `--continue` without the variable (and with B's
// key, for the configuration's B) neither moves it to B nor sends B's key
// to A; `--base-url B` moves it and says so; `--resume ID` with
// SCV_BASE_URL=A moves it back.
func TestExecResumeKeepsEndpoint(t *testing.T) {
	const keyA, keyB = "sk-exec-a-31", "sk-exec-b-42"
	a, b := modeltest.New(t), modeltest.New(t)
	in := newInstance(t, providerConfig(b.URL()))
	atA := in.withEnv("SCV_BASE_URL="+a.URL(), "OPENAI_API_KEY="+keyA)
	atB := in.withEnv("SCV_BASE_URL", "OPENAI_API_KEY="+keyB)

	a.Script(modeltest.Text("exec one"))
	if r := in.run(atA, "", "exec", "first"); r.code != 0 || !strings.Contains(r.stdout, "exec one") {
		t.Fatalf("exec at A: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	a.Script(modeltest.Text("exec two"))
	if r := in.run(atA, "", "exec", "--continue", "second"); r.code != 0 || !strings.Contains(r.stdout, "exec two") {
		t.Fatalf("exec --continue at A: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantAuth(t, "exec at A", a, b, []string{"Bearer " + keyA, "Bearer " + keyA}, nil)

	r := in.run(atB, "", "exec", "--continue", "third")
	if r.code != 1 || !strings.Contains(r.stderr, "is sent only to the endpoint it was given for") || !strings.Contains(r.stderr, "SCV_BASE_URL="+a.URL()) {
		t.Errorf("exec --continue with B's key: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	wantAuth(t, "refused exec", a, b, []string{"Bearer " + keyA, "Bearer " + keyA}, nil)

	b.Script(modeltest.Text("exec at b"))
	r = in.run(atB, "", "--base-url", b.URL(), "exec", "--continue", "fourth")
	if r.code != 0 || !strings.Contains(r.stderr, "scv: endpoint changed: "+a.URL()+" → "+b.URL()+"\n") {
		t.Errorf("exec --continue --base-url B: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	wantAuth(t, "moved to B", a, b, []string{"Bearer " + keyA, "Bearer " + keyA}, []string{"Bearer " + keyB})

	list := in.run(atA, "", "sessions", "list", "--json")
	id := ""
	if i := strings.Index(list.stdout, `"s_`); i >= 0 {
		id = list.stdout[i+1 : i+1+strings.Index(list.stdout[i+1:], `"`)]
	}
	if id == "" {
		t.Fatalf("no session id in scv sessions list --json:\n%s%s", list.stdout, list.stderr)
	}
	a.Script(modeltest.Text("back at a"))
	r = in.run(atA, "", "exec", "--resume", id, "fifth")
	if r.code != 0 || !strings.Contains(r.stderr, "scv: endpoint changed: "+b.URL()+" → "+a.URL()+"\n") {
		t.Errorf("exec --resume with SCV_BASE_URL=A: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	wantAuth(t, "moved back", a, b, []string{"Bearer " + keyA, "Bearer " + keyA, "Bearer " + keyA}, []string{"Bearer " + keyB})
}

// TestBridgeSessionsFollowTheDaemon: a session of the chat bridge (origin
// clawbot), whose client is the daemon itself and cannot name another
// endpoint, follows the daemon's configuration when it changes, with the
// daemon's key for it and the move said; a TUI session stored at the old
// endpoint is refused instead.
func TestBridgeSessionsFollowTheDaemon(t *testing.T) {
	b1, b2 := modeltest.New(t), modeltest.New(t)
	in := newInstance(t, providerConfig(b1.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	ids := map[string]string{}
	for _, origin := range []string{proto.OriginClawbot, proto.OriginTUI} {
		b1.Script(modeltest.Text("at b1"))
		sid := in.startSession(c, proto.SessionStart{Origin: origin}).SessionID
		sendTurn(t, c, sid, "hi")
		until(t, c, proto.EventTurnCompleted)
		ids[origin] = sid
	}
	c.Close()
	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: exit %d %s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(in.home, "config.toml"), []byte(providerConfig(b2.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
	in.startDaemon(in.env)
	c = in.connect()
	r, err := resumeFree(t, c, &proto.SessionResume{SessionID: ids[proto.OriginClawbot], NoTools: true})
	if err != nil {
		t.Fatalf("resume the bridge's session: %v", err)
	}
	if r.BaseURL != b2.URL() || r.PreviousBaseURL != b1.URL() {
		t.Errorf("bridge session: base_url %q previous %q, want %q from %q", r.BaseURL, r.PreviousBaseURL, b2.URL(), b1.URL())
	}
	b2.Script(modeltest.Text("at b2"))
	sendTurn(t, c, r.SessionID, "again")
	until(t, c, proto.EventTurnCompleted)
	if _, err := resumeFree(t, c, &proto.SessionResume{SessionID: ids[proto.OriginTUI]}); err == nil || !strings.Contains(err.Error(), "is sent only to the endpoint it was given for") {
		t.Errorf("resume of the TUI session stored at the old endpoint: %v, want the key refusal", err)
	}
	wantAuth(t, "after the move", b1, b2, []string{"Bearer sk-test", "Bearer sk-test"}, []string{"Bearer sk-test"})
}
