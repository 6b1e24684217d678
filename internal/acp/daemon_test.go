package acp_test

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

var (
	testBinOnce sync.Once
	testBin     string
	testBinErr  error
)

// scvBinary builds scv once for the tests and benchmarks of this package.
func scvBinary(t testing.TB) string {
	t.Helper()
	testBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "scv-acp-test")
		if err != nil {
			testBinErr = err
			return
		}
		testBin, testBinErr = testutil.BuildSCV(dir)
	})
	if testBinErr != nil {
		t.Fatal(testBinErr)
	}
	return testBin
}

// TestDaemonAttach: scv acp --daemon speaks ACP onto the running daemon's
// socket: the session lives in the daemon (stored with origin acp, listed
// there), the turn runs there, and the end of input ends scv acp with 0
// while the daemon goes on.
func TestDaemonAttach(t *testing.T) {
	bin := scvBinary(t)
	fake := modeltest.New(t)
	fake.Models = []string{"gpt-4.1-mini"}
	fake.Script(modeltest.Text("via the ", "daemon"))
	home, env := homeEnv(t, fake)
	ws := testutil.TempDir(t)
	daemon := exec.Command(bin, "run")
	daemon.Env = env
	daemon.Stderr = &testutil.LockedBuffer{}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	defer func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = daemon.Process.Kill()
			<-exited
		}
	}()
	sock := filepath.Join(home, "server.sock")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not listen on %s", sock)
		}
		time.Sleep(20 * time.Millisecond)
	}

	p := startACP(t, bin, env, "--daemon")
	p.call(t, 1, "initialize", map[string]any{"protocolVersion": 1})
	sid, _ := p.call(t, 2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})["sessionId"].(string)
	res := p.call(t, 3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "hi"}}})
	if res["stopReason"] != "end_turn" || p.chunks != "via the daemon" {
		for _, r := range fake.Requests() {
			t.Logf("model request: %.300s", r.Raw)
		}
		t.Fatalf("stopReason %v, answer %q", res["stopReason"], p.chunks)
	}
	list := p.call(t, 4, "session/list", map[string]any{"cwd": ws})
	if b, _ := json.Marshal(list); !json.Valid(b) || !containsSession(list, sid) {
		t.Errorf("session/list through the daemon does not list %s: %v", sid, list)
	}
	p.close(t)
	// The daemon goes on, and stored the session with origin acp.
	out2, err := exec.Command(bin, "--scv-home", home, "sessions", "list", "--all", "--json").Output()
	if err != nil {
		t.Fatalf("scv sessions list: %v\n%s", err, out2)
	}
	type storedSession struct {
		ID     string `json:"session_id"`
		Origin string `json:"origin"`
	}
	var stored []storedSession
	for _, l := range strings.Split(strings.TrimSpace(string(out2)), "\n") {
		var x storedSession
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("scv sessions list --json: %v\n%s", err, out2)
		}
		stored = append(stored, x)
	}
	if len(stored) != 1 || stored[0].ID != sid || stored[0].Origin != "acp" {
		t.Errorf("stored sessions %+v, want %s with origin acp", stored, sid)
	}
}

func containsSession(list map[string]any, sid string) bool {
	ss, _ := list["sessions"].([]any)
	for _, s := range ss {
		if m, _ := s.(map[string]any); m["sessionId"] == sid {
			return true
		}
	}
	return false
}
