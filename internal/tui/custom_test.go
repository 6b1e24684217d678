package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// listed answers the TUI's commands.list (Init sends it as tui-1).
func (h *harness) listed(cmds []proto.CustomCommand, skipped ...proto.SkippedCommand) {
	h.t.Helper()
	h.m.Init()
	want := []any{&proto.CommandsList{Envelope: proto.Envelope{RequestID: "tui-1"}, SessionID: "s1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		h.t.Fatalf("Init sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-1", &proto.CommandsListed{Commands: cmds, Skipped: skipped}))
}

// texts are the transcript's item texts, one per line.
func (h *harness) texts() string {
	var b strings.Builder
	for _, it := range h.m.tr.items {
		b.WriteString(it.text + "\n")
	}
	return b.String()
}

// menuNames are the names the menu offers now.
func (h *harness) menuNames() string {
	var names []string
	for _, c := range h.m.menuItems() {
		names = append(names, c.name)
	}
	return strings.Join(names, " ")
}

// TestCustomCommands: the listed commands follow the built-in ones in the
// menu, a workspace's marked (repo); one named like a built-in is left out
// with a visible reason, as are the files the server skipped; running one
// sends turn.start with its name and the raw text after it, and the
// transcript shows what was typed.
func TestCustomCommands(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.listed([]proto.CustomCommand{
		{Name: "model", Description: "shadow", Source: proto.CommandWorkspace},
		{Name: "review", Description: "Review a file", Source: proto.CommandUser},
		{Name: "rtest", Description: "Run the tests", Source: proto.CommandWorkspace},
	}, proto.SkippedCommand{File: "/ws/.scv/commands/Bad.md", Reason: "bad name"})
	f := h.texts()
	assertContains(t, "the frame", f, "custom commands skipped", "/model (workspace): the built-in /model has that name", "Bad.md: bad name")
	h.typeText("/r")
	f = h.frame()
	assertContains(t, "the menu for /r", f, "/review [args]", "Review a file", "/rtest [args]", "(repo) Run the tests", "/resume")
	if strings.Contains(f, "shadow") {
		t.Errorf("the custom /model that clashes with the built-in is offered:\n%s", f)
	}
	h.submit("eview  main.go  now ")
	want := []any{&proto.TurnStart{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", Command: "review", Arguments: "main.go  now"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("/review sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.TurnStarted{TurnHeader: th("t1")}))
	if f := h.frame(); !strings.Contains(f, "› /review main.go  now") {
		t.Errorf("the transcript does not show the command as typed:\n%s", f)
	}
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	// Enter on the menu runs the selected custom command without arguments.
	h.submit("/rt")
	want = []any{&proto.TurnStart{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", Command: "rtest"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("Enter on /rt sent (-want +got):\n%s", d)
	}
	// The built-in /model is still the built-in one.
	h.submit("/model")
	if got := h.rec.take(); len(got) != 1 || got[0].(proto.Message).MessageType() != proto.TypeModelsList {
		t.Errorf("/model sent %v, want models.list", got)
	}
}

// TestCompactCommand: /compact sends session.compact with the focus, only
// when idle; its answer shows the token estimate before and after.
func TestCompactCommand(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.prompt("hi", "t1")
	h.rec.take()
	h.submit("/compact")
	if got := h.rec.take(); len(got) != 0 {
		t.Errorf("/compact during a turn sent %v", got)
	}
	if f := h.texts(); !strings.Contains(f, "/compact works when the session is idle") {
		t.Errorf("no refusal shown:\n%s", f)
	}
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	h.submit("/compact the parser API")
	want := []any{&proto.SessionCompact{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", Focus: "the parser API"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("/compact sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.SessionCompacted{BeforeTokens: 45000, AfterTokens: 2100, RemovedMessages: 38}))
	if f := h.texts(); !strings.Contains(f, "conversation compacted: 45k → 2.1k tokens, 38 messages replaced by the model's summary") {
		t.Errorf("no compaction notice:\n%s", f)
	}
	h.submit("/compact")
	h.ev(req("tui-3", &proto.Error{Code: proto.ErrCompactFailed, Message: "the conversation was not compacted: HTTP 500"}))
	if f := h.texts(); !strings.Contains(f, "the conversation was not compacted (compact_failed)") {
		t.Errorf("the refusal is not shown:\n%s", f)
	}
}

// TestInitCommand: /init sends the fixed AGENTS.md prompt and shows /init.
func TestInitCommand(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.submit("/init")
	got := h.rec.take()
	if len(got) != 1 {
		t.Fatalf("/init sent %v", got)
	}
	ts, ok := got[0].(*proto.TurnStart)
	if !ok || !strings.Contains(ts.Prompt, "AGENTS.md") || !strings.Contains(ts.Prompt, "already exists, read it and improve it") || ts.Command != "" {
		t.Fatalf("/init sent %#v", got[0])
	}
	if len(ts.Prompt) > 4096 {
		t.Errorf("the /init prompt is %d bytes; keep it bounded (4 KiB)", len(ts.Prompt))
	}
	h.ev(req(ts.RequestID, &proto.TurnStarted{TurnHeader: th("t1")}))
	if f := h.frame(); !strings.Contains(f, "› /init") || strings.Contains(f, "Inspect the workspace") {
		t.Errorf("the transcript should show /init, not the prompt:\n%s", f)
	}
}

// TestCustomCommandsRefresh: the menu opening asks for the list again once
// it is older than commandsMaxAge (a command file added meanwhile shows
// up), and the skipped-files notice is not repeated while it is the same.
func TestCustomCommandsRefresh(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	bad := proto.SkippedCommand{File: "/ws/.scv/commands/Bad.md", Reason: "bad name"}
	h.listed([]proto.CustomCommand{{Name: "one", Description: "first", Source: proto.CommandUser}}, bad)
	h.typeText("/")
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("a fresh list was asked for again: %v", got)
	}
	h.m.composer.Reset()
	h.clk.t = h.clk.t.Add(commandsMaxAge)
	h.typeText("/")
	want := []any{&proto.CommandsList{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("opening the menu with an old list sent (-want +got):\n%s", d)
	}
	if !strings.Contains(h.menuNames(), "/one") {
		t.Errorf("the old list is not in the menu while the new one is asked for: %s", h.menuNames())
	}
	h.ev(req("tui-2", &proto.CommandsListed{Commands: []proto.CustomCommand{
		{Name: "one", Description: "first", Source: proto.CommandUser},
		{Name: "two", Description: "added later", Source: proto.CommandUser},
	}, Skipped: []proto.SkippedCommand{bad}}))
	if !strings.Contains(h.menuNames(), "/two") {
		t.Errorf("the refreshed list is not in the menu: %s", h.menuNames())
	}
	if n := strings.Count(h.texts(), "custom commands skipped"); n != 1 {
		t.Errorf("the same skipped-files notice was shown %d times, want once", n)
	}
}

// TestCustomCommandsAfterSwitch: another session's commands are asked for
// when the menu next opens, and the menu shown is drawn again when they
// arrive.
func TestCustomCommandsAfterSwitch(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.listed([]proto.CustomCommand{{Name: "one", Description: "first", Source: proto.CommandUser}})
	h.m.switchTo(&proto.SessionResumed{SessionID: "s2", Cwd: "/other"})
	h.rec.take()
	if strings.Contains(h.menuNames(), "/one") {
		t.Fatalf("the menu keeps the other session's commands: %s", h.menuNames())
	}
	h.typeText("/")
	want := []any{&proto.CommandsList{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s2"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("opening the menu in the new session sent (-want +got):\n%s", d)
	}
	h.m.Render()
	h.ev(inSession("s2", req("tui-3", &proto.CommandsListed{Commands: []proto.CustomCommand{{Name: "zz", Description: "the other one", Source: proto.CommandWorkspace}}})))
	if n := len(slashCommands()) + 1; !strings.Contains(h.frame(), fmt.Sprintf("… %d commands", n)) {
		t.Errorf("the open menu was not drawn again with the list that arrived (want %d commands):\n%s", n, h.frame())
	}
	h.keys(up) // the last entry: the new session's command
	if f := h.frame(); !strings.Contains(f, "▸ /zz [args]") || !strings.Contains(f, "(repo) the other one") {
		t.Errorf("the open menu does not show the list that arrived:\n%s", f)
	}
}
