package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestDaemonUsesClientKey: a daemon started without the provider's key
// variable runs a session with the key the client sent in session.start
// (the fake model sees it in the Authorization header); the key is never
// in the daemon's log, its home (the session database included) or any
// event. A key named for another variable is not used, and a daemon that
// has the variable keeps its own key.
func TestDaemonUsesClientKey(t *testing.T) {
	const clientKey = "sk-client-3f9a2c7e1b"
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.withEnv("OPENAI_API_KEY", "SCV_LOG=debug"))
	c := in.connect()

	// The client named another variable: the key is not used, and the
	// session cannot start without one.
	_, err := c.StartSession(t.Context(), proto.SessionStart{Cwd: in.ws, ProviderKeyEnv: "OTHER_KEY", ProviderKey: clientKey})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || strings.Contains(err.Error(), clientKey) {
		t.Errorf("session.start with a key for OTHER_KEY: %v, want a refusal naming OPENAI_API_KEY", err)
	}

	fm.Script(modeltest.Text("answered with the client's key"))
	started := in.startSession(c, proto.SessionStart{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: clientKey, ProviderKeyBaseURL: fm.URL(), Origin: proto.OriginTUI})
	sendTurn(t, c, started.SessionID, "hi")
	evs := until(t, c, proto.EventTurnCompleted)
	reqs := modelRequests(t, fm, 1)
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+clientKey {
		t.Errorf("Authorization = %q, want the client's key", got)
	}
	for _, ev := range evs {
		b, _ := proto.EncodeEvent(ev)
		if bytes.Contains(b, []byte(clientKey)) {
			t.Errorf("event %s holds the key", b)
		}
	}
	st := in.run(in.env, "", "status", "--json")
	if strings.Contains(st.stdout, clientKey) {
		t.Errorf("status shows the key: %s", st.stdout)
	}
	var status struct {
		Provider *proto.DaemonProvider `json:"provider"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || status.Provider == nil {
		t.Fatalf("status --json: %v\n%s", err, st.stdout)
	}
	if p := status.Provider; p.KeyEnv != "OPENAI_API_KEY" || p.KeySet {
		t.Errorf("status provider %+v, want key_env OPENAI_API_KEY not set", p)
	}
	c.Close()

	// Resumed on another connection, the stored session takes the key
	// sent with session.resume.
	fm.Script(modeltest.Text("resumed with the client's key"))
	c = in.connect()
	// The daemon releases the session when it sees the first connection's
	// close, so the resume may find it still busy for a moment.
	resumed, err := resumeFree(t, c, &proto.SessionResume{SessionID: started.SessionID,
		ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: clientKey, ProviderKeyBaseURL: fm.URL()})
	if err != nil {
		t.Fatalf("session.resume with the key: %v", err)
	}
	sendTurn(t, c, resumed.SessionID, "again")
	until(t, c, proto.EventTurnCompleted)
	if reqs := fm.Requests(); len(reqs) != 2 || reqs[1].Header.Get("Authorization") != "Bearer "+clientKey {
		t.Errorf("resumed session: %d requests, last Authorization %q", len(reqs), reqs[len(reqs)-1].Header.Get("Authorization"))
	}
	c.Close()

	// Stop the daemon so its log and database are complete on disk.
	if r := in.run(in.env, "", "stop"); r.code != 0 {
		t.Fatalf("scv stop: exit %d %s", r.code, r.stderr)
	}
	if !d.wait(20e9) {
		t.Fatal("the daemon did not stop")
	}
	if strings.Contains(d.stderr.String(), clientKey) {
		t.Errorf("the daemon's log holds the key")
	}
	if !strings.Contains(d.stderr.String(), "daemon listening") {
		t.Errorf("the daemon's log is not where the test reads it; the check above proves little:\n%s", d.stderr)
	}
	var scanned []string
	err = filepath.WalkDir(in.home, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned = append(scanned, path)
		if bytes.Contains(b, []byte(clientKey)) {
			t.Errorf("%s holds the key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The session (with its turn) is in the database that was scanned.
	db := filepath.Join(in.home, "state", "scv.db")
	if b, err := os.ReadFile(db); err != nil || !bytes.Contains(b, []byte("answered with the client")) && !strings.Contains(strings.Join(scanned, " "), "scv.db-wal") {
		t.Errorf("the turn is not in %s (%v); scanned %q", db, err, scanned)
	}

	// A daemon with its own key uses it, not the client's.
	in.startDaemon(in.withEnv("OPENAI_API_KEY=sk-daemon"))
	c = in.connect()
	fm.Script(modeltest.Text("answered with the daemon's key"))
	started = in.startSession(c, proto.SessionStart{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: clientKey, ProviderKeyBaseURL: fm.URL()})
	sendTurn(t, c, started.SessionID, "hi")
	until(t, c, proto.EventTurnCompleted)
	if reqs := fm.Requests(); len(reqs) != 3 || reqs[2].Header.Get("Authorization") != "Bearer sk-daemon" {
		t.Errorf("second daemon: requests %d, Authorization %q, want the daemon's key", len(reqs), reqs[len(reqs)-1].Header.Get("Authorization"))
	}
}

// TestStatusShowsProvider: scv status names the daemon's provider, model,
// base URL, key variable and the configuration files it read.
func TestStatusShowsProvider(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.withEnv("SCV_MODEL=daemon-model"))
	r := in.run(in.env, "", "status")
	if r.code != 0 {
		t.Fatalf("scv status: exit %d %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"  provider:    openai (responses), model daemon-model\n",
		"  base URL:    " + fm.URL() + "\n",
		"  key:         OPENAI_API_KEY (set in the daemon's environment)\n",
		"  config:      " + filepath.Join(in.home, "config.toml") + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("scv status lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestTUIUsesClientSettings: the real terminal UI (in a tmux pane),
// started with OPENAI_API_KEY and SCV_MODEL in its environment, against a
// daemon started without the key and with another SCV_MODEL: the model
// request carries the client's key and model.
func TestTUIUsesClientSettings(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	const clientKey = "sk-client-tui-77d1"
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("hello from the fake model"))
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.withEnv("OPENAI_API_KEY", "SCV_MODEL=daemon-model"))

	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-S", sock}, args...)...)
		cmd.Env = append(in.withEnv(), "TERM=xterm-256color")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("cd %q && env OPENAI_API_KEY=%s SCV_MODEL=client-model %q --scv-home %q; sleep 60", in.ws, clientKey, scvBin, in.home)
	tmux("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "30", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	waitScreen := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := tmux("capture-pane", "-p", "-t", "e2e")
			if strings.Contains(s, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", want, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitScreen("client-model") // the status line names the session's model
	tmux("send-keys", "-t", "e2e", "-l", "hi")
	tmux("send-keys", "-t", "e2e", "Enter")
	waitScreen("hello from the fake model")
	reqs := modelRequests(t, fm, 1)
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+clientKey {
		t.Errorf("Authorization = %q, want the TUI's key", got)
	}
	if got := reqs[0].Body["model"]; got != "client-model" {
		t.Errorf("model = %v, want the TUI's SCV_MODEL", got)
	}
}
