package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// TestSlashMenu: "/" opens the menu of every command, typing filters it,
// Up/Down select, Tab completes, Esc closes it and Enter runs the
// selected command.
func TestSlashMenu(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.typeText("/")
	h.golden("slash_menu_open")
	h.typeText("re")
	h.golden("slash_menu_filtered")
	f := h.frame()
	assertContains(t, "filtered menu", f, "/resume", "/rewind")
	if strings.Contains(f, "/model") {
		t.Errorf("filtered menu still shows /model:\n%s", f)
	}
	h.keys(down, tabKey)
	if got := h.m.composer.Value(); got != "/rewind" {
		t.Errorf("Down, Tab completed %q, want /rewind", got)
	}
	h.keys(esc)
	if strings.Contains(h.frame(), "tab complete") {
		t.Errorf("Esc did not close the menu:\n%s", h.frame())
	}
	if got := h.m.composer.Value(); got != "/rewind" {
		t.Errorf("Esc changed the composer to %q", got)
	}
	h.m.composer.Reset()
	h.submit("/mo")
	want := []any{&proto.ModelsList{Envelope: proto.Envelope{RequestID: "tui-1"}, SessionID: "s1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("Enter on /mo sent (-want +got):\n%s", d)
	}
	if got := h.m.composer.Value(); got != "" {
		t.Errorf("the composer keeps %q after running a command", got)
	}
}

// TestSlashWordsNotCommands: an unknown /word is refused with a hint and
// nothing is sent (the text stays to be fixed); // sends one literal
// slash; a first word that is a path is a prompt.
func TestSlashWordsNotCommands(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 16 })
	h.submit("/frobnicate the build")
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("an unknown command sent %v", got)
	}
	if got := h.m.composer.Value(); got != "/frobnicate the build" {
		t.Errorf("the refused text was not kept: %q", got)
	}
	h.golden("slash_unknown")
	if !strings.Contains(h.frame(), "/help lists the commands") {
		t.Errorf("no hint naming /help:\n%s", h.frame())
	}
	// The refused text is selected: the next command replaces it instead
	// of being appended to it (which made the prompt "/compact/cost").
	h.m.composer.Reset()
	h.submit("/zap")
	h.typeText("/nosuch")
	if got := h.m.composer.Value(); got != "/nosuch" {
		t.Errorf("typing after a refused command made the composer %q, want /nosuch", got)
	}
	h.keys(enter)
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("a second unknown command typed after the first sent %v", got)
	}
	// An arrow key keeps the refused text to be fixed.
	h.keys(tea.KeyPressMsg{Code: tea.KeyEnd})
	h.typeText(" x")
	if got := h.m.composer.Value(); got != "/nosuch x" {
		t.Errorf("End then typing made the composer %q, want the refused text kept and extended", got)
	}
	h.m.composer.Reset()
	h.submit("/help me please")
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("/help with words sent %v", got)
	}
	cases := []struct{ typed, sent string }{
		{"//etc/hosts", "/etc/hosts"},
		{"//model is a word", "/model is a word"},
		{"/etc/hosts is odd", "/etc/hosts is odd"},
	}
	for i, c := range cases {
		h.m.composer.Reset()
		h.submit(c.typed)
		id := "tui-" + string(rune('1'+i))
		if d := cmp.Diff([]any{turnStart(id, c.sent)}, h.rec.take()); d != "" {
			t.Errorf("%q sent (-want +got):\n%s", c.typed, d)
		}
	}
}

// TestModelCommand: /model lists the models in a picker with the current
// one marked; Enter switches; session.configured updates the status
// line's model and context window; unsupported shows the usage.
func TestModelCommand(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 16 })
	h.submit("/model")
	h.rec.take()
	h.ev(req("tui-1", &proto.ModelsListed{Current: "gpt-test", Models: []string{"gpt-big", "gpt-test", "gpt-tiny"}}))
	h.golden("model_picker")
	h.keys(down, enter)
	want := []any{&proto.SessionConfigure{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", Model: "gpt-tiny"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("picking a model sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.SessionConfigured{Model: "gpt-tiny", ContextMaxTokens: 32000}))
	f := h.frame()
	if !strings.Contains(f, "scv │ gpt-tiny │") || !strings.Contains(f, "ctx 32k") {
		t.Errorf("the header and status line do not show the new model and window:\n%s", f)
	}
	h.submit("/model gpt-big high")
	want = []any{&proto.SessionConfigure{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", Model: "gpt-big", ReasoningEffort: "high"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("/model NAME effort sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-3", &proto.Error{Code: proto.ErrInvalidRequest, Message: "unknown reasoning effort"}))
	if !strings.Contains(h.frame(), "the model was not changed") {
		t.Errorf("a refused configure is not shown:\n%s", h.frame())
	}
	h.submit("/model")
	h.ev(req("tui-4", &proto.Error{Code: proto.ErrUnsupported, Message: "the provider cannot list models"}))
	if f := h.frame(); !strings.Contains(f, "/model NAME [effort]") {
		t.Errorf("unsupported does not show the usage:\n%s", f)
	}
}

// TestUndoCommand: /undo asks for a dry run, shows its files, diffs and
// note, y sends the undo; n keeps the files; undo_refused is a notice.
func TestUndoCommand(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 20 })
	h.submit("/undo")
	want := []any{&proto.SessionUndo{Envelope: proto.Envelope{RequestID: "tui-1"}, SessionID: "s1", DryRun: true}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("/undo sent (-want +got):\n%s", d)
	}
	dry := &proto.SessionUndone{TurnID: "t1", DryRun: true, Note: "changes made through bash or delegated agents are not tracked and stay",
		Files: []proto.UndoFile{
			{Path: "notes.md", Action: "restore", Diff: &proto.Diff{Path: "notes.md", Text: "--- notes.md\n+++ notes.md\n@@ -1,2 +1,2 @@\n-new line\n+old line\n same\n", Added: 1, Removed: 1}},
			{Path: "gen/out.txt", Action: "remove", Diff: &proto.Diff{Path: "gen/out.txt", Text: "--- gen/out.txt\n+++ /dev/null\n@@ -1,12 +0,0 @@\n" + strings.Repeat("-generated\n", 12), Removed: 12}},
		}}
	h.ev(req("tui-1", dry))
	h.golden("undo_confirm")
	h.keys(key('y'))
	want = []any{&proto.SessionUndo{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("y sent (-want +got):\n%s", d)
	}
	done := *dry
	done.DryRun = false
	h.ev(req("tui-2", &done))
	if f := h.frame(); !strings.Contains(f, "undone: 2 files") || !strings.Contains(f, "removed gen/out.txt") {
		t.Errorf("the undo result is not shown:\n%s", f)
	}

	// n keeps the files; a refusal is shown.
	h.submit("/undo")
	h.ev(req("tui-3", dry))
	h.keys(key('n'))
	if got := h.rec.take(); len(got) != 1 {
		t.Errorf("n sent more than the dry run: %v", got)
	}
	h.submit("/undo")
	h.ev(req("tui-4", &proto.Error{Code: proto.ErrUndoRefused, Message: "notes.md was changed since the turn wrote it"}))
	if f := h.frame(); !strings.Contains(f, "undo refused: notes.md was changed") {
		t.Errorf("undo_refused not shown:\n%s", f)
	}
}

// TestHistoryWalksPastCommands: a recalled command opens the menu, but
// Up keeps walking the history.
func TestHistoryWalksPastCommands(t *testing.T) {
	h := newHarness(t, nil)
	h.prompt("first prompt", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	h.submit("/context")
	h.keys(up)
	if got := h.m.composer.Value(); got != "/context" {
		t.Fatalf("Up recalled %q, want /context", got)
	}
	h.keys(up)
	if got := h.m.composer.Value(); got != "first prompt" {
		t.Errorf("a second Up gave %q, want the earlier prompt", got)
	}
}
