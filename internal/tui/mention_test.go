package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// drain runs cmd and the commands its messages lead to (the walk's
// batches), as the Bubble Tea runtime would.
func (h *harness) drain(cmd tea.Cmd) {
	for n := 0; cmd != nil; n++ {
		if n > 1000 {
			h.t.Fatal("the walk did not end")
		}
		msg := cmd()
		if msg == nil {
			return
		}
		_, cmd = h.m.Update(msg)
	}
}

// typeWalk types s, running the commands the keys start.
func (h *harness) typeWalk(s string) {
	for _, r := range s {
		h.drain(h.keys(key(r)))
	}
}

func mentionWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":               "build/\n",
		"build/composer_gen.go":    "",
		"internal/tui/composer.go": "package tui\n",
		"main.go":                  "package main\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// TestMentionCompletion: `@` at a word start opens the completion over the
// session's workspace (.gitignore respected), typing ranks it, Tab
// completes, Esc closes; the sent prompt carries the @path as typed and
// its turn shows the mentions as chips.
func TestMentionCompletion(t *testing.T) {
	ws := mentionWorkspace(t)
	h := newHarness(t, func(c *Config) { c.Session.Cwd = ws; c.Height = 20 })
	h.typeWalk("explain @comp")
	f := h.frame()
	if !strings.Contains(f, "▸ @internal/tui/composer.go") || strings.Contains(f, "build/") {
		t.Fatalf("the completion lacks composer.go or offers an ignored path:\n%s", f)
	}
	h.keys(tabKey)
	if got := h.m.composer.Value(); got != "explain @internal/tui/composer.go " {
		t.Errorf("Tab completed to %q", got)
	}
	if strings.Contains(h.frame(), "tab/enter complete") {
		t.Errorf("the completion stays open after a file was completed:\n%s", h.frame())
	}
	// A directory completes without a space, the popup then offers what
	// is below it.
	h.typeWalk("and @inte")
	h.keys(enter)
	if got := h.m.composer.Value(); !strings.HasSuffix(got, " @internal/") {
		t.Fatalf("Enter completed to %q", got)
	}
	if f := h.frame(); !strings.Contains(f, "@internal/tui/") {
		t.Errorf("after a directory the popup does not offer what is below it:\n%s", f)
	}
	h.keys(esc)
	if f := h.frame(); strings.Contains(f, "tab/enter complete") {
		t.Errorf("Esc did not close the completion:\n%s", f)
	}
	// Closed, Enter sends the prompt as typed.
	h.keys(enter)
	want := []any{turnStart("tui-1", "explain @internal/tui/composer.go and @internal/")}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("sent (-want +got):\n%s", d)
	}
	h.ev(&proto.TurnStarted{TurnHeader: th("t1"), Mentions: []proto.Mention{
		{Path: "internal/tui/composer.go", Kind: proto.MentionFile, Bytes: 12},
		{Path: "internal/", Kind: proto.MentionDir, Bytes: 4},
		{Path: ".env", Kind: proto.MentionFile, Refused: "it looks like it holds secrets"},
	}})
	f = h.frame()
	assertContains(t, "the transcript", f, "[@internal/tui/composer.go] [@internal/] [@.env ✗]", "@.env not attached: it looks like it holds secrets")
	if strings.Contains(f, "package tui") {
		t.Errorf("the transcript shows the attached content:\n%s", f)
	}
}

// An @ inside a word (a mail address) opens nothing, and no walk starts.
func TestMentionOnlyAtWordStart(t *testing.T) {
	ws := mentionWorkspace(t)
	h := newHarness(t, func(c *Config) { c.Session.Cwd = ws })
	for _, r := range "mail a@main" {
		if cmd := h.keys(key(r)); cmd != nil {
			t.Fatalf("typing %q started a walk", r)
		}
	}
	if strings.Contains(h.frame(), "@main.go") {
		t.Errorf("a mid-word @ opened the completion:\n%s", h.frame())
	}
}

// A repository's file name is shown, never acted on: an escape sequence
// in one reaches the popup as visible text.
func TestMentionPopupShowsHostileNames(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "evil\x1b[31mred.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Session.Cwd = ws })
	h.typeWalk("@evil")
	raw := h.m.Render()
	if strings.Contains(raw, "\x1b[31mred") {
		t.Errorf("the popup printed a file name's escape sequence raw:\n%q", raw)
	}
	if !strings.Contains(h.frame(), "@evil") {
		t.Errorf("the popup does not show the file:\n%s", h.frame())
	}
}

// A resumed session redraws a turn's chips from its stored turn.started.
func TestMentionChipsReplayed(t *testing.T) {
	h := newHarness(t, nil)
	ev := &proto.TurnStarted{TurnHeader: th("t1"), Mentions: []proto.Mention{{Path: "go.mod", Kind: proto.MentionFile, Bytes: 70}}}
	ev.SessionID, ev.Seq = "s1", 1
	raw, err := proto.EncodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	h.m.replayTurn(proto.StoredTurn{TurnID: "t1", N: 1, Prompt: "what is @go.mod", State: proto.TurnStateCompleted, Events: []json.RawMessage{raw}})
	if f := h.frame(); !strings.Contains(f, "› what is @go.mod") || !strings.Contains(f, "[@go.mod]") {
		t.Errorf("the replayed turn lacks its prompt or chip:\n%s", f)
	}
}

// A walk abandoned while its command runs (the workspace changed) is
// closed when its batch comes back, never under the running command, and
// its paths are dropped.
func TestMentionAbandonedWalk(t *testing.T) {
	ws1, ws2 := mentionWorkspace(t), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws2, "other.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Session.Cwd = ws1 })
	first := h.keys(key('@'))
	if first == nil {
		t.Fatal("@ started no walk")
	}
	old := h.m.at.walker
	h.m.session.Cwd = ws2
	h.keys(key(' '))
	second := h.keys(key('@'))
	if second == nil || h.m.at.walker == old {
		t.Fatal("a new workspace started no new walk")
	}
	if old.Done() {
		t.Fatal("the abandoned walker was closed while its command could still run it")
	}
	h.drain(first)
	if !old.Done() {
		t.Error("the abandoned walker was not closed when its batch came back")
	}
	h.drain(second)
	h.typeWalk("oth")
	if f := h.frame(); !strings.Contains(f, "@other.txt") || strings.Contains(f, "main.go") {
		t.Errorf("the completion is not of the new workspace alone:\n%s", f)
	}
}

// An @-mentioned image shows as an image chip, live and when resumed; a
// resumed turn shows the prompt's own images (sent with /image) as image
// chips and the mentioned one only as its mention chip, as live.
func TestMentionedImageChip(t *testing.T) {
	h := newHarness(t, nil)
	h.submit("look at @shot.png")
	ev := &proto.TurnStarted{TurnHeader: th("t1"), Mentions: []proto.Mention{{Path: "shot.png", Kind: proto.MentionImage, Bytes: 120 << 10}}}
	h.ev(ev)
	const chip = "[@shot.png · image 120 KB]"
	if f := h.frame(); !strings.Contains(f, chip) {
		t.Errorf("the live transcript lacks %q:\n%s", chip, f)
	}

	ev.SessionID, ev.Seq = "s1", 1
	raw, err := proto.EncodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	r := newHarness(t, nil)
	r.m.replayTurn(proto.StoredTurn{TurnID: "t1", N: 1, Prompt: "look at @shot.png", State: proto.TurnStateCompleted, Events: []json.RawMessage{raw},
		Images: []proto.Image{{Path: "/w/dot.gif", Size: 14}, {Path: "/w/shot.png", Size: 120 << 10}}})
	f := r.frame()
	if !strings.Contains(f, chip) || !strings.Contains(f, "[image dot.gif 14 B]") {
		t.Errorf("the resumed transcript lacks %q or the /image chip:\n%s", chip, f)
	}
	if strings.Contains(f, "[image shot.png") {
		t.Errorf("the resumed transcript shows the mentioned image twice:\n%s", f)
	}
}
