package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// recorder is the Sender of model tests: it keeps what the model sent.
type recorder struct {
	msgs []any
	err  error
}

func (r *recorder) Send(m proto.Message) error {
	if r.err != nil {
		return r.err
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) take() []any {
	m := r.msgs
	r.msgs = nil
	return m
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var sessionStarted = proto.SessionStarted{SessionID: "s1", Cwd: "/home/ada/project", Model: "gpt-test", ContextMaxTokens: 128000, Tools: []string{"bash", "read"}}

// th is the header of an event of turn id; the harness adds the session.
func th(id string) proto.TurnHeader { return proto.TurnHeader{TurnID: id} }

// req sets the request_id that ev answers.
func req[T proto.Event](id string, ev T) T {
	ev.Head().RequestID = id
	return ev
}

// inSession sets the session of ev.
func inSession[T proto.SessionEvent](id string, ev T) T {
	ev.Session().SessionID = id
	return ev
}

type harness struct {
	t   *testing.T
	m   *Model
	rec *recorder
	clk *clock
	seq uint64
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, rec: &recorder{}, clk: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	cfg := Config{Session: sessionStarted, Sender: h.rec, Now: h.clk.now, Width: 80, Height: 24}
	if mod != nil {
		mod(&cfg)
	}
	h.m = New(cfg)
	return h
}

// ev feeds events, putting session events in session s1 (unless they name
// another) and numbering seq like the server.
func (h *harness) ev(evs ...proto.Event) {
	for _, e := range evs {
		if se, ok := e.(proto.SessionEvent); ok {
			sh := se.Session()
			if sh.SessionID == "" {
				sh.SessionID = "s1"
			}
			h.seq++
			sh.Seq = h.seq
		}
		h.m.Update(EventMsg{e})
	}
}

func (h *harness) keys(ks ...tea.KeyPressMsg) tea.Cmd {
	var last tea.Cmd
	for _, k := range ks {
		_, last = h.m.Update(k)
	}
	return last
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.keys(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// submit types s and presses Enter; it returns Enter's command.
func (h *harness) submit(s string) tea.Cmd {
	h.typeText(s)
	return h.keys(enter)
}

var (
	enter  = tea.KeyPressMsg{Code: tea.KeyEnter}
	esc    = tea.KeyPressMsg{Code: tea.KeyEscape}
	ctrlC  = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	ctrlJ  = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	ctrlO  = tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	up     = tea.KeyPressMsg{Code: tea.KeyUp}
	down   = tea.KeyPressMsg{Code: tea.KeyDown}
	pgUp   = tea.KeyPressMsg{Code: tea.KeyPgUp}
	pgDown = tea.KeyPressMsg{Code: tea.KeyPgDown}
	ctrlP  = tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl}
	ctrlR  = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	tabKey = tea.KeyPressMsg{Code: tea.KeyTab}
	delKey = tea.KeyPressMsg{Code: tea.KeyDelete}
)

func key(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

// prompt types and submits a prompt, then starts its turn as the server
// would.
func (h *harness) prompt(text, turnID string) {
	h.submit(text)
	h.ev(&proto.TurnStarted{TurnHeader: th(turnID)})
}

// assertContains reports each of want that s, which is what (say, "the
// panel"), does not contain.
func assertContains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// frame is the rendered frame without colour and trailing spaces.
func (h *harness) frame() string {
	lines := strings.Split(ansi.Strip(h.m.Render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func (h *harness) golden(name string) {
	h.t.Helper()
	got := h.frame()
	if n := strings.Count(got, "\n"); n != h.m.height {
		h.t.Errorf("%s: frame has %d lines, want the window height %d", name, n, h.m.height)
	}
	path := filepath.Join("testdata", name+".golden")
	if testutil.Update() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("read golden (run go test -update): %v", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		h.t.Errorf("%s frame (-want +got):\n%s", name, d)
	}
}

func turnStart(id, prompt string) *proto.TurnStart {
	return &proto.TurnStart{Envelope: proto.Envelope{RequestID: id}, SessionID: "s1", Prompt: prompt}
}

func args(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestStreamingText(t *testing.T) {
	h := newHarness(t, nil)
	h.golden("empty")
	h.prompt("Explain the build", "t1")
	if d := cmp.Diff([]any{turnStart("tui-1", "Explain the build")}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "The build uses **Go"},
		&proto.AssistantDelta{TurnHeader: th("t1"), Content: " modules** and"})
	h.clk.t = h.clk.t.Add(3 * time.Second)
	h.golden("streaming")
	h.ev(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "The build uses **Go modules** and:\n\n- `go build`\n- `go test`\n\n```sh\ngo vet ./...\n```"},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1, Usage: &proto.Usage{InputTokens: 3200, OutputTokens: 50, TotalTokens: 3250}})
	h.golden("completed_markdown")
}

func TestToolStates(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 40 })
	h.prompt("do things", "t1")
	out := "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\n"
	h.ev(
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "read", Arguments: args(map[string]any{"path": "go.mod"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "read"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "read", Success: true, Output: out, Truncated: false},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "rm -rf build"})},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c2", Name: "bash", Success: false, Error: "denied", Output: "denied by the user"},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c3", Name: "web_fetch", Arguments: args(map[string]any{"url": "http://127.0.0.1/x"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c3", Name: "web_fetch"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c3", Name: "web_fetch", Success: false, Error: "limit", Output: "response over 10 MiB", Truncated: true},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c7", Name: "bash", Arguments: args(map[string]any{"command": "ls nope"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c7", Name: "bash"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c7", Name: "bash", Success: false, Error: "failed", Output: `{"exit_code":2,"timed_out":false,"output":"ls: cannot access 'nope'\n","truncated":false}`},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c4", Name: "bash", Arguments: args(map[string]any{"command": "sleep 100"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c4", Name: "bash"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c4", Name: "bash", Success: false, Error: "cancelled", Output: ""},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c5", Name: "bash", Arguments: args(map[string]any{"command": "make test", "timeout": 60})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c5", Name: "bash"},
		&proto.ToolProgress{TurnHeader: th("t1"), CallID: "c5", Text: "ok  	pkg/a	0.2s"},
		&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c6", Name: "write", Arguments: args(map[string]any{"path": "notes.md", "content": "x"})},
	)
	h.golden("tool_states")

	want := map[string]toolState{"c1": toolDone, "c2": toolDenied, "c3": toolFailed, "c7": toolFailed, "c4": toolCancelled, "c5": toolRunning, "c6": toolPending}
	got := map[string]toolState{}
	for id, it := range h.m.tr.tools {
		got[id] = it.state
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool states (-want +got):\n%s", d)
	}

	// Ctrl+O expands the latest output (c3's), and collapses it again.
	h.keys(ctrlO)
	h.golden("tool_expanded")
	h.keys(ctrlO)
	if h.m.render.expanded != nil {
		t.Error("second Ctrl+O did not collapse")
	}
}

func TestExpandLongOutput(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("list", "t1")
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", i%100) + "\n")
	}
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "seq"})},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: true, Output: b.String()})
	collapsed := len(h.m.tr.tools["c1"].render(80, h.m.render))
	h.keys(ctrlO)
	expanded := len(h.m.tr.tools["c1"].render(80, h.m.render))
	// header + preview + "more" line; header + bounded expansion + "more" line.
	if collapsed != 1+PreviewLines+1 || expanded != 1+ExpandedLines+1 {
		t.Errorf("rows collapsed=%d expanded=%d, want %d and %d", collapsed, expanded, 1+PreviewLines+1, 1+ExpandedLines+1)
	}
}

func (h *harness) approvalFlow() {
	h.prompt("clean up", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "rm -rf build"})},
		&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "c1", Name: "bash", Risk: "process", Cwd: "/home/ada/project", Summary: "run `rm -rf build` in /home/ada/project"})
	h.rec.take()
}

func resolve(id string, ok bool) *proto.ApprovalResolve {
	return &proto.ApprovalResolve{Envelope: proto.Envelope{RequestID: id}, SessionID: "s1", ApprovalID: "a1", Approved: ok}
}

func cancel(id string) *proto.TurnCancel {
	return &proto.TurnCancel{Envelope: proto.Envelope{RequestID: id}, SessionID: "s1", TurnID: "t1"}
}

func TestApproval(t *testing.T) {
	h := newHarness(t, nil)
	h.approvalFlow()
	h.golden("approval_panel")
	h.keys(key('y'))
	if d := cmp.Diff([]any{resolve("tui-2", true)}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash"},
		&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: true, Output: "removed 3 files"},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Done: the build directory is gone."},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 2})
	h.golden("approved")
}

func TestDenial(t *testing.T) {
	denyAndCancel := resolve("tui-2", false)
	denyAndCancel.CancelTurn = true
	tests := []struct {
		name  string
		key   tea.KeyPressMsg
		sent  []any
		state toolState
	}{
		{"n denies", key('n'), []any{resolve("tui-2", false)}, toolDenied},
		// One message denies and cancels: nothing can start between them.
		{"esc denies and cancels", esc, []any{denyAndCancel}, toolCancelled},
		{"ctrl+c with empty input denies and cancels", ctrlC, []any{denyAndCancel}, toolCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.approvalFlow()
			h.keys(tc.key)
			if d := cmp.Diff(tc.sent, h.rec.take()); d != "" {
				t.Errorf("sent (-want +got):\n%s", d)
			}
			if h.m.approval != nil {
				t.Error("approval panel still shown")
			}
			if got := h.m.tr.tools["c1"].state; got != tc.state {
				t.Errorf("row state = %v, want %v", got, tc.state)
			}
		})
	}
	h := newHarness(t, nil)
	h.approvalFlow()
	h.keys(key('n'))
	h.ev(&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Success: false, Error: "denied", Output: "the user denied this call"},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Understood, I left it alone."},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 2})
	h.golden("denied")
}

func TestQueueing(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("first", "t1")
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "working on it"})
	h.submit("second")
	h.submit("third")
	want := []any{turnStart("tui-1", "first"), turnStart("tui-2", "second"), turnStart("tui-3", "third")}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.QueueEnqueued{QueueID: "q1"}),
		req("tui-3", &proto.QueueEnqueued{QueueID: "q2"}))
	h.golden("queued")
	h.ev(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "working on it"},
		&proto.TurnCompleted{TurnHeader: th("t1")},
		&proto.TurnStarted{TurnHeader: th("t2")})
	h.golden("queued_started")
}

func TestErrors(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("hi", "t1")
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "partial"},
		&proto.TurnFailed{TurnHeader: th("t1"), Code: proto.FailProvider, Message: "HTTP 500 from http://127.0.0.1:1/v1/responses"})
	h.submit("again")
	h.ev(req("tui-2", &proto.Error{Code: proto.ErrSessionNotFound, Message: "unknown session s1", Fatal: false}),
		&proto.ContextCompacted{BeforeTokens: 120000, AfterTokens: 30000, RemovedMessages: 12},
		&proto.SessionTrimmed{RemovedMessages: 4, HistoryBytes: 3 << 20})
	if len(h.m.pending) != 0 {
		t.Errorf("rejected prompt still pending: %+v", h.m.pending)
	}
	h.golden("errors")
}

func TestDisconnect(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("hi", "t1")
	h.ev(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "make"})},
		&proto.ToolStarted{TurnHeader: th("t1"), CallID: "c1", Name: "bash"})
	h.rec.take()
	h.m.Update(DisconnectedMsg{Err: os.ErrClosed})
	h.submit("still there?")
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("sent %v while disconnected", got)
	}
	h.golden("disconnected")
	if cmd := h.keys(ctrlC, ctrlC); cmd == nil {
		t.Error("Ctrl+C on an empty composer while disconnected did not quit")
	}
}

func TestSendFailureDisconnects(t *testing.T) {
	h := newHarness(t, nil)
	h.rec.err = os.ErrClosed
	h.submit("hello")
	if h.m.conn != disconnected || len(h.m.pending) != 0 {
		t.Errorf("conn=%v pending=%v after a failed send", h.m.conn, h.m.pending)
	}
}

func TestCtrlC(t *testing.T) {
	h := newHarness(t, nil)
	h.typeText("draft")
	if cmd := h.keys(ctrlC); cmd != nil || h.m.composer.Value() != "" {
		t.Errorf("first Ctrl+C: cmd=%v value=%q, want the input cleared", cmd, h.m.composer.Value())
	}
	h.prompt("run", "t1")
	h.rec.take()
	h.keys(ctrlC)
	if d := cmp.Diff([]any{cancel("tui-2")}, h.rec.take()); d != "" {
		t.Errorf("Ctrl+C during a turn sent (-want +got):\n%s", d)
	}
	h.keys(esc)
	if d := cmp.Diff([]any{cancel("tui-3")}, h.rec.take()); d != "" {
		t.Errorf("Esc during a turn sent (-want +got):\n%s", d)
	}
	h.ev(&proto.TurnCancelled{TurnHeader: th("t1")})
	h.keys(esc) // idle: nothing to cancel
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("Esc while idle sent %v", got)
	}
	cmd := h.keys(ctrlC)
	if cmd == nil {
		t.Fatal("Ctrl+C while idle with empty input did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("Ctrl+C command is not tea.Quit")
	}
	if h.m.Render() != "" {
		t.Error("the final frame after quitting is not empty")
	}
}

func TestComposerAndHistory(t *testing.T) {
	h := newHarness(t, nil)
	h.typeText("line one")
	h.keys(ctrlJ)
	h.typeText("line two")
	h.golden("multiline")
	h.keys(enter)
	h.ev(&proto.TurnStarted{TurnHeader: th("t1")}, &proto.TurnCompleted{TurnHeader: th("t1")})
	h.submit("second")
	sent := h.rec.take()
	if d := cmp.Diff([]any{turnStart("tui-1", "line one\nline two"), turnStart("tui-2", "second")}, sent); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	h.typeText("draft")
	steps := []struct {
		k    tea.KeyPressMsg
		want string
	}{{up, "second"}, {up, "line one\nline two"}, {down, "second"}, {down, "draft"}}
	for _, s := range steps {
		h.keys(s.k)
		if got := h.m.composer.Value(); got != s.want {
			t.Errorf("after %s composer = %q, want %q", s.k, got, s.want)
		}
	}
}

func TestLocalCommands(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 30 })
	h.submit("/help")
	h.prompt("hi", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1"), Usage: &proto.Usage{InputTokens: 6400, TotalTokens: 7000}})
	h.submit("/context")
	h.golden("help_context")
	h.rec.take()
	h.submit("/clear")
	want := []any{&proto.SessionClear{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("/clear sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.SessionCleared{}))
	if n := len(h.m.tr.items); n != 1 {
		t.Errorf("%d items after session.cleared, want the one notice", n)
	}
	// A slash word that is no command is a prompt.
	h.submit("/etc/hosts looks odd")
	if d := cmp.Diff([]any{turnStart("tui-3", "/etc/hosts looks odd")}, h.rec.take()); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	// /clear while a turn runs stays local.
	h.ev(&proto.TurnStarted{TurnHeader: th("t2")})
	h.submit("/clear")
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("/clear during a turn sent %v", got)
	}
	if cmd := h.submit("/quit"); cmd == nil {
		t.Error("/quit did not quit")
	}
}

func TestScrollEvictionAndResize(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxItems = 20 })
	for i := range 50 {
		h.m.addItem(&item{kind: kindNotice, text: "note " + strings.Repeat("·", i%5) + " " + string(rune('a'+i%26))})
	}
	if n, ev := len(h.m.tr.items), h.m.tr.evicted; n > 20 || n+ev != 50 {
		t.Errorf("items=%d evicted=%d, want at most 20 kept and the rest counted", n, ev)
	}
	h.golden("bottom")
	h.keys(pgUp, pgUp, pgUp, pgUp, pgUp)
	h.golden("scrolled_top_evicted")
	h.keys(pgDown, pgDown, pgDown, pgDown, pgDown)
	if h.m.scroll != 0 {
		t.Errorf("scroll = %d after paging back down", h.m.scroll)
	}
	h.prompt("Please summarise the repository layout and tell me which packages are leaves", "t1")
	h.ev(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "The leaves are **proto**, **jsonl**, **proc** and **paths**; they import only the standard library."})
	h.m.Update(tea.WindowSizeMsg{Width: 40, Height: 16})
	h.golden("resized_narrow")
}

func TestScrolledViewStaysPut(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 40 {
		h.m.addItem(&item{kind: kindNotice, text: "note " + strconv.Itoa(i)})
	}
	h.prompt("more", "t1")
	h.frame()
	h.keys(pgUp)
	before := h.frame()
	h.ev(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "one\ntwo\nthree"})
	after := h.frame()
	body := func(f string) string { // without the status line, which changes
		lines := strings.Split(f, "\n")
		return strings.Join(lines[:len(lines)-2], "\n")
	}
	if d := cmp.Diff(body(before), body(after)); d != "" {
		t.Errorf("scrolled view moved when lines arrived below (-before +after):\n%s", d)
	}
	h.keys(pgDown, pgDown, pgDown)
	if f := h.frame(); !strings.Contains(f, "three") {
		t.Errorf("back at the bottom the new text is not shown:\n%s", f)
	}
}

func TestOneTickChain(t *testing.T) {
	h := newHarness(t, nil)
	_, first := h.m.Update(EventMsg{inSession("s1", &proto.TurnStarted{TurnHeader: th("t1")})})
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	_, second := h.m.Update(EventMsg{inSession("s1", &proto.TurnStarted{TurnHeader: th("t2")})})
	if first == nil || second != nil {
		t.Errorf("tick commands: first=%v second=%v; want one chain while it runs", first != nil, second != nil)
	}
	if _, next := h.m.Update(tickMsg{}); next == nil {
		t.Error("a tick during a turn did not schedule the next")
	}
	h.ev(&proto.TurnCompleted{TurnHeader: th("t2")})
	if _, next := h.m.Update(tickMsg{}); next != nil {
		t.Error("a tick after the turn scheduled another")
	}
	if _, again := h.m.Update(EventMsg{inSession("s1", &proto.TurnStarted{TurnHeader: th("t3")})}); again == nil {
		t.Error("a turn after the chain ended started no tick")
	}
}

func TestOtherSessionIgnored(t *testing.T) {
	h := newHarness(t, nil)
	h.m.Update(EventMsg{inSession("other", &proto.AssistantDelta{Content: "x"})})
	if len(h.m.tr.items) != 0 {
		t.Error("an event of another session was shown")
	}
}

// The status line's context figure is the server's context estimate when a
// turn.completed carries one (a turn's usage sums all of its requests).
func TestContextUseFromServerEstimate(t *testing.T) {
	h := newHarness(t, nil)
	h.ev(&proto.TurnStarted{TurnHeader: th("t1")},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 3, Usage: &proto.Usage{InputTokens: 30000, OutputTokens: 100, TotalTokens: 30100}, ContextTokens: 12800})
	if got := h.m.contextUse(); got != "ctx 12k/128k (10%)" {
		t.Fatalf("context use = %q", got)
	}
	// Without the estimate, the usage's input tokens are shown.
	h.ev(&proto.TurnStarted{TurnHeader: th("t2")},
		&proto.TurnCompleted{TurnHeader: th("t2"), Steps: 1, Usage: &proto.Usage{InputTokens: 6400, OutputTokens: 10, TotalTokens: 6410}})
	if got := h.m.contextUse(); got != "ctx 6.4k/128k (5%)" {
		t.Fatalf("context use = %q", got)
	}
}
