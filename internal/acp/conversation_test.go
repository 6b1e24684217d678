package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/tools/txtar"

	"github.com/scv-agent/scv/internal/acp"
	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	goleak.VerifyTestMain(m)
}

// TestConversations replays each testdata/conversations/*.txtar against
// acp.Serve over an in-process server (with a session database) and the
// scripted fake model: the editor's lines in, every line scv acp writes
// out (session ids, paths and token estimates normalised), compared with
// the want section.
//
// Sections: config.toml (appended to a user config pointing at the fake
// model), model.json (modeltest.LoadScript format), ws/<name> (workspace
// files), script, want, want-ws (optional: `NAME "content"` lines the
// workspace must hold at the end), no-key (present: the provider's key
// variable is not set).
// Script lines: "> JSON" sends a line ($WORK, $S1, $S2 substituted),
// "raw TEXT" sends TEXT verbatim, "wait N" waits until N lines have come,
// "wait-for TEXT" waits for the next unseen line containing TEXT,
// "answer JSON" answers the last request scv acp sent ($ID is its id),
// "turn PROMPT" lines run TUI-like turns, all in one session, on another
// connection to the same server first (a stored session to load; $S1
// names it).
func TestConversations(t *testing.T) {
	testutil.RunArchives(t, "testdata/conversations/*.txtar", runConversation)
}

// harness is one conversation's server, fake model and workspace.
type harness struct {
	t      *testing.T
	ws     string
	home   string
	srv    *server.Server
	ap     *app.App
	env    map[string]string
	fake   *modeltest.Server
	stored []string // session ids made by "turn" lines
	// mcpCmd and mcpEnv run the fake MCP server ($MCP_CMD, $MCP_ENV).
	mcpCmd, mcpEnv string
}

func newHarness(t *testing.T, a *txtar.Archive) *harness {
	fake := modeltest.New(t)
	if js, ok := testutil.Section(a, "model.json"); ok {
		testutil.ScriptModel(t, fake, js)
	}
	fake.Models = []string{"gpt-4.1-mini", "gpt-5"}
	h := &harness{t: t, home: t.TempDir(), ws: testutil.TempDir(t), fake: fake}
	cmd, env := mcptest.Fake(t.TempDir())
	var vars []map[string]string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars = append(vars, map[string]string{"name": k, "value": v})
	}
	b, _ := json.Marshal(vars)
	h.mcpCmd, h.mcpEnv = cmd, string(b)
	testutil.ArchiveFiles(t, a, "ws/", h.ws)
	extra, _ := testutil.Section(a, "config.toml")
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n%s", fake.URL(), extra)
	testutil.WriteFile(t, filepath.Join(h.home, "config.toml"), cfg)
	h.env = map[string]string{"OPENAI_API_KEY": "sk-test-key", "HOME": h.home, "PATH": os.Getenv("PATH")}
	if _, ok := testutil.Section(a, "no-key"); ok {
		delete(h.env, "OPENAI_API_KEY")
	}
	h.ap = app.New(app.Options{Layout: paths.Layout{Home: h.home}, Env: h.env})
	t.Cleanup(h.ap.Close)
	loaded, err := h.ap.LoadConfig("", app.NoOverrides)
	if err != nil {
		t.Fatal(err)
	}
	me := store.Holder{Instance: h.home, PID: os.Getpid(), Start: 1, Name: "test server"}
	st, err := store.Open(t.Context(), store.Options{Path: paths.Layout{Home: h.home}.Database(), Holder: me,
		Alive: func(x store.Holder) bool { return x == me }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pc := loaded.Config.Protocol
	h.srv = server.New(server.Options{Factory: h.ap, Version: "test", MaxClientFrame: pc.MaxClientFrameBytes,
		MaxServerFrame: pc.MaxServerFrameBytes, MaxSessionsPerConn: pc.MaxSessionsPerConnection, MaxSessions: pc.MaxSessions,
		Store: st, Name: "test server"})
	return h
}

// serve runs the server on a fresh pipe pair and returns its client; stop
// ends both.
func (h *harness) serve() (*client.Conn, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.srv.Serve(ctx, toServer, fromServer)
		fromServer.Close()
		toServer.Close()
	}()
	conn := client.NewConn(toClient, fromClient)
	return conn, func() {
		conn.Close()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			h.t.Error("the server did not end after EOF")
			cancel()
			<-served
		}
		cancel()
	}
}

func (h *harness) options() acp.Options {
	return acp.Options{Version: "test",
		Workspace: func(cwd string) (string, error) {
			l, err := h.ap.LoadConfig(cwd, app.NoOverrides)
			if err != nil {
				return "", nil
			}
			if _, err := l.Config.APIKey(h.env); err != nil {
				return "", err
			}
			p, _ := approval.Parse(l.Config.Tools.ApprovalPolicy)
			return string(p), nil
		},
	}
}

var (
	progressLine = regexp.MustCompile(`"update":\{"sessionUpdate":"tool_call_update","toolCallId":"[^"]*","content":`)
	sessionID    = regexp.MustCompile(`s_[0-9a-f-]{12}`)
	usedRe       = regexp.MustCompile(`"used":\d+`)
	timeRe       = regexp.MustCompile(`"updatedAt":"[^"]*"`)
)

// normaliser names session ids $S1, $S2 … in order of appearance.
type normaliser struct {
	ws, home string
	names    map[string]string
	reals    map[string]string
	vars     map[string]string // replaced in sent lines only
}

func (n *normaliser) normalise(line string) string {
	line = sessionID.ReplaceAllStringFunc(line, func(id string) string {
		if name, ok := n.names[id]; ok {
			return name
		}
		name := fmt.Sprintf("$S%d", len(n.names)+1)
		n.names[id], n.reals[name] = name, id
		return name
	})
	line = strings.ReplaceAll(line, n.ws, "$WORK")
	line = strings.ReplaceAll(line, n.home, "$HOME")
	line = usedRe.ReplaceAllString(line, `"used":N`)
	return timeRe.ReplaceAllString(line, `"updatedAt":"T"`)
}

func (n *normaliser) expand(line string) string {
	for name, id := range n.reals {
		line = strings.ReplaceAll(line, name, id)
	}
	for k, v := range n.vars {
		line = strings.ReplaceAll(line, k, v)
	}
	return strings.ReplaceAll(line, "$WORK", n.ws)
}

func runConversation(t *testing.T, file string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, a)
	n := &normaliser{ws: h.ws, home: h.home, names: map[string]string{}, reals: map[string]string{},
		vars: map[string]string{"$MCP_CMD": h.mcpCmd, "$MCP_ENV": h.mcpEnv}}
	script, _ := testutil.Section(a, "script")
	lines := strings.Split(script, "\n")
	// "turn" lines come first: they make the stored session.
	var prompts []string
	for _, l := range lines {
		if prompt, ok := strings.CutPrefix(strings.TrimSpace(l), "turn "); ok {
			prompts = append(prompts, prompt)
		}
	}
	if len(prompts) > 0 {
		h.storedTurns(prompts)
	}
	for _, id := range h.stored {
		n.normalise(id)
	}
	conn, stopServer := h.serve()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- acp.Serve(t.Context(), conn, inR, outW, h.options())
		outW.Close()
	}()
	var lastRequest string
	out := testutil.ReadLines(outR, func(line string) (string, bool) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(line), &m)
		if m.Method != "" && len(m.ID) > 0 {
			lastRequest = string(m.ID)
		}
		// A progress line depends on timing (at most two a second), so it
		// is left out, like tool.progress in the server's conversations.
		if progressLine.MatchString(line) {
			return "", false
		}
		return n.normalise(line), true
	})
	h.play(lines, n, inW, out, &lastRequest)
	inW.Close()
	testutil.WaitServed(t, served, 30*time.Second)
	got := out.Wait()
	stopServer()
	h.check(a)
	testutil.GoldenSection(t, file, a, "want", strings.Join(got, "\n")+"\n")
}

// play sends the script's lines to scv acp and waits as they say;
// lastRequest (read under out's lock) is the id of the last request scv
// acp sent.
func (h *harness) play(lines []string, n *normaliser, in io.Writer, out *testutil.LineLog, lastRequest *string) {
	t := h.t
	send := func(s string) {
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	locked := func(f func() string) (s string) {
		out.Locked(func() { s = f() })
		return s
	}
	seen := 0
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "turn "):
		case strings.HasPrefix(line, "> "):
			send(locked(func() string { return n.expand(strings.TrimPrefix(line, "> ")) }))
		case strings.HasPrefix(line, "raw "):
			send(strings.TrimPrefix(line, "raw "))
		case strings.HasPrefix(line, "answer "):
			send(locked(func() string { return strings.ReplaceAll(strings.TrimPrefix(line, "answer "), "$ID", *lastRequest) }))
		case strings.HasPrefix(line, "wait-for "):
			text := strings.TrimPrefix(line, "wait-for ")
			out.WaitFor(t, text, 30*time.Second, func(got []string) bool {
				for i := seen; i < len(got); i++ {
					if strings.Contains(got[i], text) {
						seen = i + 1
						return true
					}
				}
				return false
			})
		case strings.HasPrefix(line, "wait "):
			var want int
			fmt.Sscan(strings.TrimPrefix(line, "wait "), &want)
			out.WaitFor(t, line, 30*time.Second, func(got []string) bool { return len(got) >= want })
		default:
			t.Fatalf("bad script line %q", line)
		}
	}
}

// storedTurns runs turns as the TUI would (origin tui) in one session on
// a connection of its own, which then ends: the session is stored and
// closed, ready for session/load.
func (h *harness) storedTurns(prompts []string) {
	conn, stop := h.serve()
	defer stop()
	ctx := h.t.Context()
	if _, err := conn.Initialize(ctx, "tui", "test"); err != nil {
		h.t.Fatal(err)
	}
	started, err := conn.StartSession(ctx, protoStart(h.ws))
	if err != nil {
		h.t.Fatal(err)
	}
	for _, prompt := range prompts {
		if err := conn.Send(turnStart(started.SessionID, prompt)); err != nil {
			h.t.Fatal(err)
		}
		for ev := range conn.Events() {
			if approvalNeeded(conn, started.SessionID, ev) {
				continue
			}
			if ended(ev) {
				break
			}
		}
	}
	h.stored = append(h.stored, started.SessionID)
}

// check compares what the conversation left with the optional sections:
// want-ws (`NAME "content"` or `NAME absent` per line), model-requests
// (how many requests the fake model received), want-request-models (the
// model of each request, one a line) and want-last-request-has (text the
// last request's body holds, JSON-escaped, HTML escapes undone).
func (h *harness) check(a *txtar.Archive) {
	t := h.t
	if w, ok := testutil.Section(a, "want-ws"); ok {
		for _, l := range strings.Split(strings.TrimSpace(w), "\n") {
			name, content, _ := strings.Cut(l, " ")
			b, err := os.ReadFile(filepath.Join(h.ws, name))
			switch {
			case content == "absent":
				if err == nil {
					t.Errorf("workspace file %s exists (%q), want it absent", name, b)
				}
			case err != nil:
				t.Errorf("workspace file %s: %v", name, err)
			case fmt.Sprintf("%q", b) != content:
				t.Errorf("workspace file %s holds %q, want %s", name, b, content)
			}
		}
	}
	reqs := h.fake.Requests()
	if n, ok := testutil.Section(a, "model-requests"); ok && fmt.Sprint(len(reqs)) != strings.TrimSpace(n) {
		t.Errorf("the fake model got %d requests, want %s", len(reqs), strings.TrimSpace(n))
	}
	if w, ok := testutil.Section(a, "want-request-models"); ok {
		var got []string
		for _, r := range reqs {
			got = append(got, fmt.Sprint(r.Body["model"]))
		}
		if g := strings.Join(got, "\n"); g != strings.TrimSpace(w) {
			t.Errorf("the fake model's requests named the models\n%s\nwant\n%s", g, strings.TrimSpace(w))
		}
	}
	if w, ok := testutil.Section(a, "want-last-request-has"); ok {
		raw := ""
		if len(reqs) > 0 {
			raw = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(reqs[len(reqs)-1].Raw))
		}
		if !strings.Contains(raw, strings.TrimSpace(w)) {
			t.Errorf("the fake model's last request does not contain %s:\n%s", strings.TrimSpace(w), raw)
		}
	}
}
