package clawbot_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

// realDaemon is the daemon's real server and app over a fake model, with
// every client line the server receives recorded.
type realDaemon struct {
	model *modeltest.Server
	srv   *server.Server
	mu    sync.Mutex
	lines []map[string]any
}

// newRealDaemon builds the app and server for home h with config extra;
// the workspace holds a skill (so a listing shows whether skills are
// offered) and web search is the provider's hosted one.
func newRealDaemon(t testing.TB, h *harness, extra string) *realDaemon {
	t.Helper()
	d := &realDaemon{model: modeltest.New(t)}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n[web]\nsearch = \"provider\"\n%s\n", d.model.URL(), extra)
	testutil.WriteFile(t, h.layout.ConfigFile(), cfg)
	testutil.WriteFile(t, filepath.Join(h.ws, ".scv", "skills", "release-checks", "SKILL.md"), "---\ndescription: Checks before a release.\n---\nSteps.\n")
	tr, err := delegation.New(delegation.Options{Dir: h.layout.Delegations(), CallDir: h.layout.Calls()})
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(app.Options{Layout: paths.Layout{Home: h.layout.Home}, Env: map[string]string{"OPENAI_API_KEY": "sk-test", "HOME": t.TempDir(), "PATH": os.Getenv("PATH")}, Tracker: tr})
	t.Cleanup(a.Close)
	d.srv = server.New(server.Options{Factory: a, Version: "test", Store: h.store, Name: "daemon"})
	h.daemon = clawbot.ProtocolDaemon{Serve: d.serve, Version: "test"}
	return d
}

// serve records the client's lines on their way to the server.
func (d *realDaemon) serve(ctx context.Context, r io.Reader, w io.Writer) error {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				d.mu.Lock()
				d.lines = append(d.lines, m)
				d.mu.Unlock()
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				break
			}
		}
		pw.Close()
	}()
	return d.srv.Serve(ctx, pr, w)
}

func (d *realDaemon) received(typ string) []map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []map[string]any
	for _, l := range d.lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// The owner, in a direct chat, of an account with remote_tools = "owner"
// gets a session with tools, and the bridge grants its approvals: the
// command runs.
func TestOwnerSessionRunsToolsOnTheRealServer(t *testing.T) {
	h := newHarness(t)
	d := newRealDaemon(t, h, "")
	h.settings("default", clawbot.Settings{Enabled: true, RemoteTools: clawbot.RemoteToolsOwner})
	d.model.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo approved > out.txt"}`))
	d.model.Script(modeltest.Text("I wrote out.txt"))
	h.fake.Batch("c1", ilinktest.Text(1, ownerID, "write a file"))
	h.start()
	sent := h.waitSent(1)
	if sent[0].Text != "I wrote out.txt" {
		t.Errorf("reply = %q", sent[0].Text)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "out.txt")); err != nil || string(b) != "approved\n" {
		t.Errorf("the approved command did not run: %q, %v", b, err)
	}
	starts := d.received("session.start")
	if len(starts) != 1 || starts[0]["no_tools"] == true {
		t.Errorf("session.start = %v, want one with tools", starts)
	}
	if res := d.received("approval.resolve"); len(res) != 1 || res[0]["approved"] != true {
		t.Errorf("approval answers = %v, want one grant", res)
	}
	reqs := d.model.Requests()
	if names := reqs[0].ToolNames(); !strings.Contains(strings.Join(names, ","), "bash") || !reqs[0].HasHostedWebSearch() {
		t.Errorf("tools offered to the owner: %v, hosted search %v", names, reqs[0].HasHostedWebSearch())
	}
}

// Everyone else — another sender, the owner in a group, every sender of
// an account without a known owner — gets session.start {no_tools:true}:
// the model is offered no tools, no hosted search and no skills.
func TestToolFreeSessionsOnTheRealServer(t *testing.T) {
	tests := []struct {
		name, owner string
		msg         map[string]any
	}{
		{"another sender", ownerID, ilinktest.Text(1, "mallory@im.wechat", "hello")},
		{"the owner in a group", ownerID, ilinktest.GroupText(1, "team@chatroom", ownerID, "hello")},
		{"no owner known", "", ilinktest.Text(1, ownerID, "hello")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.login("default", tt.owner)
			d := newRealDaemon(t, h, "")
			h.settings("default", clawbot.Settings{Enabled: true, RemoteTools: clawbot.RemoteToolsOwner})
			d.model.Script(modeltest.Text("hi there"))
			h.fake.Batch("c1", tt.msg)
			h.start()
			if sent := h.waitSent(1); sent[0].Text != "hi there" {
				t.Errorf("reply = %q", sent[0].Text)
			}
			starts := d.received("session.start")
			if len(starts) != 1 || starts[0]["no_tools"] != true {
				t.Fatalf("session.start = %v, want no_tools:true", starts)
			}
			req := d.model.Requests()[0]
			instr, _ := req.Body["instructions"].(string)
			if len(req.ToolNames()) != 0 || req.HasHostedWebSearch() || strings.Contains(instr, "release-checks") {
				t.Errorf("a tool-free session offered tools %v, hosted search %v, or skills", req.ToolNames(), req.HasHostedWebSearch())
			}
		})
	}
}

// The bridge answers every approval its session asks with its grant:
// denied, the command never runs (what a tool-free session would get if
// it ever asked).
func TestDeniedApprovalOnTheRealServer(t *testing.T) {
	h := newHarness(t)
	d := newRealDaemon(t, h, "")
	d.model.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo denied > out.txt"}`))
	d.model.Script(modeltest.Text("could not"))
	sess, err := h.daemon.Open(t.Context(), clawbot.SessionSpec{Workspace: h.ws})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.Run(t.Context(), "write a file", false)
	if err != nil || out.State != clawbot.TurnCompleted || out.Answer != "could not" {
		t.Fatalf("turn = %+v, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "out.txt")); err == nil {
		t.Error("a denied command ran")
	}
	if res := d.received("approval.resolve"); len(res) != 1 || res[0]["approved"] != false {
		t.Errorf("approval answers = %v, want one denial", res)
	}
}

// The protocol adapter starts a fresh session when the daemon does not
// know session.resume.
func TestResumeFallsBackToANewSession(t *testing.T) {
	h := newHarness(t)
	d := newRealDaemon(t, h, "")
	d.model.Script(modeltest.Text("fresh"))
	sess, err := h.daemon.Open(t.Context(), clawbot.SessionSpec{Workspace: h.ws, NoTools: true, Resume: "s_gone"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if sess.Resumed() || sess.ID() == "s_gone" || sess.ID() == "" {
		t.Errorf("session %q resumed %v", sess.ID(), sess.Resumed())
	}
	if len(d.received("session.resume")) != 1 || len(d.received("session.start")) != 1 {
		t.Errorf("requests: resume %v, start %v", d.received("session.resume"), d.received("session.start"))
	}
	if out, err := sess.Run(t.Context(), "hi", false); err != nil || out.Answer != "fresh" {
		t.Errorf("turn = %+v, %v", out, err)
	}
}

// Sessions resume after a daemon restart through session.resume: a
// remote sender's second message, after the bridge and the daemon's server
// were stopped and built again over the same database, continues the
// stored session (the model sees the first exchange), without tools, and
// no new session is started. The session is stored with origin clawbot.
func TestSessionResumedAfterDaemonRestart(t *testing.T) {
	h := newHarness(t)
	d := newRealDaemon(t, h, "")
	h.settings("default", clawbot.Settings{Enabled: true, RemoteTools: clawbot.RemoteToolsOwner})
	d.model.Script(modeltest.Text("Hello Ada"))
	// Posted, not queued as a batch: the first supervisor's last long poll
	// can outlive it at the fake server, and a queued batch it took would
	// be lost with it; a posted message is delivered again to the next
	// poll from the stored cursor, as the real service does.
	h.fake.Post(ilinktest.Text(1, "mallory@im.wechat", "my name is Ada"))
	h.start()
	if sent := h.waitSent(1); sent[0].Text != "Hello Ada" {
		t.Fatalf("first reply = %q", sent[0].Text)
	}
	starts := d.received("session.start")
	if len(starts) != 1 {
		t.Fatalf("session.start = %v", starts)
	}
	h.waitIdle("default")
	h.stop()

	d2 := newRealDaemon(t, h, "")
	d2.model.Script(modeltest.Text("You are Ada"))
	h.fake.Post(ilinktest.Text(2, "mallory@im.wechat", "what is my name?"))
	h.start()
	if sent := h.waitSent(2); sent[1].Text != "You are Ada" {
		t.Fatalf("second reply = %q", sent[1].Text)
	}
	resumes := d2.received("session.resume")
	if len(resumes) != 1 || resumes[0]["no_tools"] != true {
		t.Fatalf("session.resume = %v, want one with no_tools:true", resumes)
	}
	if got := d2.received("session.start"); len(got) != 0 {
		t.Errorf("a new session was started after the restart: %v", got)
	}
	req := d2.model.Requests()[0]
	if b, _ := json.Marshal(req.Body); !strings.Contains(string(b), "my name is Ada") || !strings.Contains(string(b), "Hello Ada") {
		t.Errorf("the resumed session's request lacks the first exchange: %s", b)
	}
	if len(req.ToolNames()) != 0 || req.HasHostedWebSearch() {
		t.Errorf("the resumed tool-free session offered tools %v, hosted search %v", req.ToolNames(), req.HasHostedWebSearch())
	}
	page, err := h.store.ListSessions(t.Context(), store.ListOptions{})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Origin != store.Origin(proto.OriginClawbot) || page.Sessions[0].Turns != 2 {
		t.Errorf("stored sessions = %+v, %v; want one of origin clawbot with 2 turns", page.Sessions, err)
	}
}

// scriptedServe is a daemon that knows session.resume: it answers it with
// a session.resumed line naming resumed with tools, and records every
// request type.
func scriptedServe(resumed string, tools []string, got *[]string) clawbot.ServeFunc {
	return func(ctx context.Context, r io.Reader, w io.Writer) error {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m struct {
				Type      string `json:"type"`
				RequestID string `json:"request_id"`
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return err
			}
			*got = append(*got, m.Type)
			var ev map[string]any
			switch m.Type {
			case "initialize":
				ev = map[string]any{"type": "initialized", "protocol_version": 1, "server": map[string]string{"name": "scv", "version": "t"}}
			case "session.resume":
				ev = map[string]any{"type": "session.resumed", "session_id": resumed, "cwd": "/w", "model": "m", "context_max_tokens": 1, "tools": tools, "seq": 0}
			case "session.close":
				ev = map[string]any{"type": "session.closed", "session_id": m.SessionID, "seq": 1}
			case "session.start":
				ev = map[string]any{"type": "session.started", "session_id": "s_new", "cwd": "/w", "model": "m", "context_max_tokens": 1, "tools": []string{}, "seq": 0}
			default:
				ev = map[string]any{"type": "error", "code": "invalid_request", "message": "unexpected " + m.Type, "fatal": false}
			}
			ev["request_id"] = m.RequestID
			if _, err := w.Write([]byte(testutil.JSON(ev) + "\n")); err != nil {
				return err
			}
		}
		return sc.Err()
	}
}

// A daemon that resumes the recorded session: the bridge reads the
// answer's session_id and tools from its wire form, keeps a resumed
// session of the same authority, and closes and replaces one that would
// give a tool-free conversation tools.
func TestResumeAnsweredBySessionResumed(t *testing.T) {
	tests := []struct {
		name      string
		noTools   bool
		tools     []string
		wantID    string
		resumed   bool
		wantCalls []string
	}{
		{"owner session with tools", false, []string{"bash"}, "s_old", true, []string{"initialize", "session.resume"}},
		{"tool-free session stays tool-free", true, []string{}, "s_old", true, []string{"initialize", "session.resume"}},
		{"tool-free conversation never resumes tools", true, []string{"bash"}, "s_new", false, []string{"initialize", "session.resume", "session.close", "session.start"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			d := clawbot.ProtocolDaemon{Serve: scriptedServe("s_old", tc.tools, &got), Version: "t"}
			sess, err := d.Open(t.Context(), clawbot.SessionSpec{Workspace: "/w", NoTools: tc.noTools, Resume: "s_old"})
			if err != nil {
				t.Fatal(err)
			}
			sess.Close()
			if sess.ID() != tc.wantID || sess.Resumed() != tc.resumed {
				t.Errorf("session %q resumed %v, want %q resumed %v", sess.ID(), sess.Resumed(), tc.wantID, tc.resumed)
			}
			if diff := cmp.Diff(tc.wantCalls, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
