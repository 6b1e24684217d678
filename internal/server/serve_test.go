package server_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

// newTestServer builds a server over the real app with a fake model.
func newTestServer(t *testing.T, fake *modeltest.Server, extra string) (*server.Server, string) {
	t.Helper()
	srv, ws, _ := newTestServerWith(t, fake, extra, server.Options{})
	return srv, ws
}

// newTestServerFrame is newTestServer with a server frame limit.
func newTestServerFrame(t *testing.T, fake *modeltest.Server, frame int) (*server.Server, string) {
	t.Helper()
	srv, ws, _ := newTestServerWith(t, fake, "", server.Options{MaxServerFrame: frame})
	return srv, ws
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newTestServerWith builds the server of a test home whose config points
// at fake, with opts' limits; it returns the workspace and the home too.
func newTestServerWith(t *testing.T, fake *modeltest.Server, extra string, opts server.Options) (srv *server.Server, ws, home string) {
	t.Helper()
	home = t.TempDir()
	ws = testutil.TempDir(t)
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n%s", fake.URL(), extra)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ap := app.New(app.Options{Layout: paths.Layout{Home: home}, Env: map[string]string{"OPENAI_API_KEY": "sk-test", "HOME": home, "PATH": os.Getenv("PATH")}})
	opts.Factory, opts.Version, opts.Store = ap, "test", openTestStore(t, home, nil)
	return server.New(opts), ws, home
}

// openTestStore opens the session database of a test home, held by this
// process; fault, when set, is the store's write-failure injector. It is
// closed when the test ends.
func openTestStore(t testing.TB, home string, fault func(op string) error) *store.Store {
	t.Helper()
	me := store.Holder{Instance: home, PID: os.Getpid(), Start: 1, Name: "test server"}
	st, err := store.Open(t.Context(), store.Options{Path: paths.Layout{Home: home}.Database(), Holder: me,
		Alive: func(h store.Holder) bool { return h == me }, Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

const initLines = `{"type":"initialize","request_id":"i","protocol_version":1,"client":{"name":"t","version":"0"}}` + "\n"

// A client that stops reading is disconnected after about 3 s and its
// turn is cancelled and joined: Serve returns on its own.
func TestSlowClientDisconnected(t *testing.T) {
	fake := modeltest.New(t)
	frags := make([]string, 2000)
	for i := range frags {
		frags[i] = strings.Repeat("x", 100)
	}
	fake.Script(modeltest.Text(frags...))
	srv, ws := newTestServer(t, fake, "")
	cr, cw := io.Pipe()
	sr, sw := io.Pipe() // nobody reads the server's output until the end
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), cr, sw) }()
	go func() {
		io.WriteString(cw, initLines)
		io.WriteString(cw, fmt.Sprintf(`{"type":"session.start","request_id":"s","cwd":%q}`+"\n", ws))
	}()
	// A client that never reads cannot learn its session id, so the flood
	// is error answers: more than the 256 frames the writer may queue.
	go func() {
		for i := 0; i < 5000; i++ {
			if _, err := io.WriteString(cw, `{"type":"no.such","request_id":"x"}`+"\n"); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not give up on a client that stopped reading")
	}
	// As the daemon does after Serve: close the connection, which ends the
	// writer blocked on it.
	sr.Close()
	cw.Close()
}

// EOF from the client cancels its running turn, stops the command the turn
// started, and Serve returns only after that.
func TestEOFCancelsAndJoins(t *testing.T) {
	fake := modeltest.New(t)
	marker := fmt.Sprintf("scv-eof-test-%d", time.Now().UnixNano())
	fake.Script(modeltest.ToolCall("c1", "bash", fmt.Sprintf(`{"command":"exec -a %s sleep 300"}`, marker)))
	srv, ws := newTestServer(t, fake, "")
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), cr, sw); sw.Close() }()
	lines := make(chan string, 100)
	go func() {
		buf := make([]byte, 1<<20)
		var acc strings.Builder
		for {
			n, err := sr.Read(buf)
			acc.Write(buf[:n])
			for {
				s := acc.String()
				i := strings.IndexByte(s, '\n')
				if i < 0 {
					break
				}
				lines <- s[:i]
				acc.Reset()
				acc.WriteString(s[i+1:])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	wait := func(typ string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("server ended before %s", typ)
				}
				if strings.Contains(l, `"type":"`+typ+`"`) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s", typ)
			}
		}
	}
	io.WriteString(cw, initLines)
	wait("initialized")
	io.WriteString(cw, fmt.Sprintf(`{"type":"session.start","request_id":"s","cwd":%q}`+"\n", ws))
	sid := field(wait("session.started"), "session_id")
	io.WriteString(cw, fmt.Sprintf(`{"type":"turn.start","request_id":"t","session_id":%q,"prompt":"sleep"}`+"\n", sid))
	ap := field(wait("approval.requested"), "approval_id")
	if n := srv.Running(); n != 1 {
		t.Errorf("Running() = %d while the turn waits for its approval, want 1", n)
	}
	io.WriteString(cw, fmt.Sprintf(`{"type":"approval.resolve","request_id":"a","session_id":%q,"approval_id":%q,"approved":true}`+"\n", sid, ap))
	wait("tool.started")
	deadline := time.Now().Add(5 * time.Second)
	for !running(marker) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cw.Close() // EOF
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after EOF")
	}
	for range lines {
	}
	if n := srv.Running(); n != 0 {
		t.Errorf("Running() = %d after Serve returned, want 0", n)
	}
	if running(marker) {
		t.Fatal("the command survived the connection's EOF")
	}
}

func field(line, name string) string {
	key := `"` + name + `":"`
	i := strings.Index(line, key)
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// running reports whether a live process has marker in its command line.
func running(marker string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmd), marker) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil {
			s := string(stat)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] != "Z" {
				return true
			}
		}
	}
	return false
}

// session.start canonicalises cwd: a symlink to the workspace starts the
// session in the real directory.
func TestSessionCwdCanonical(t *testing.T) {
	fake := modeltest.New(t)
	srv, ws := newTestServer(t, fake, "")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	in := initLines + fmt.Sprintf(`{"type":"session.start","request_id":"s","cwd":%q}`+"\n", link+"/./")
	var out strings.Builder
	if err := srv.Serve(t.Context(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if got := field(lineOf(out.String(), "session.started"), "cwd"); got != ws {
		t.Fatalf("session.started cwd = %q, want %q\n%s", got, ws, out.String())
	}
}

func lineOf(out, typ string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"type":"`+typ+`"`) {
			return l
		}
	}
	return ""
}

// TestSessionBoundsAcrossConnections: protocol.max_sessions bounds the
// sessions of all connections together and max_sessions_per_connection
// those of one; refusals are limit_exceeded, and a closed session (or an
// ended connection) frees its slot.
func TestSessionBoundsAcrossConnections(t *testing.T) {
	fake := modeltest.New(t)
	home := t.TempDir()
	ws := testutil.TempDir(t)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf("[providers.openai]\nbase_url = %q\n", fake.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
	ap := app.New(app.Options{Layout: paths.Layout{Home: home}, Env: map[string]string{"OPENAI_API_KEY": "sk-test", "HOME": home, "PATH": os.Getenv("PATH")}})
	srv := server.New(server.Options{Factory: ap, Version: "test", MaxSessions: 3, MaxSessionsPerConn: 2})
	start := func(c *client.Conn) (string, string) {
		ev, err := c.StartSession(t.Context(), proto.SessionStart{Cwd: ws})
		var re *client.RequestError
		if errors.As(err, &re) {
			return "", re.Code
		}
		if err != nil {
			t.Fatal(err)
		}
		return ev.SessionID, ""
	}
	a, closeA := connect(t, srv)
	b, closeB := connect(t, srv)
	defer closeB()
	a1, _ := start(a)
	_, _ = start(a)
	if _, code := start(a); code != proto.ErrLimit {
		t.Errorf("third session on one connection: code %q, want %s", code, proto.ErrLimit)
	}
	_, _ = start(b)
	if _, code := start(b); code != proto.ErrLimit {
		t.Errorf("fourth session of the server: code %q, want %s", code, proto.ErrLimit)
	}
	if _, err := a.Call(t.Context(), &proto.SessionClose{SessionID: a1}); err != nil {
		t.Fatal(err)
	}
	if id, code := start(b); id == "" {
		t.Errorf("after a session.close the server refused again: %q", code)
	}
	closeA() // the connection's sessions are released when it ends
	c, closeC := connect(t, srv)
	defer closeC()
	if id, code := start(c); id == "" {
		t.Errorf("after a connection ended its slots stayed taken: %q", code)
	}
}
