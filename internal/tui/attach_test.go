package tui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// attachHarness is a TUI whose first attach is still running: Attach is
// never run by the harness, the test hands the model its AttachedMsg.
func attachHarness(t *testing.T) (*harness, *[]Sender) {
	t.Helper()
	var adopted []Sender
	h := newHarness(t, func(c *Config) {
		c.Session = proto.SessionStarted{Cwd: "/home/ada/project", Model: "configured-model"}
		c.Sender = nil
		c.Attach = func() AttachedMsg { t.Error("the harness runs no attach"); return AttachedMsg{} }
		c.Adopt = func(s Sender) { adopted = append(adopted, s) }
	})
	return h, &adopted
}

// TestEarlyFrame: before the session exists the whole screen is drawn
// (header with the workspace and the configured model, the composer, a
// status line that says it connects and which keys act); prompts entered
// meanwhile are kept and sent in order once the session has started, and
// the connection's events are pumped only from then on; commands wait.
func TestEarlyFrame(t *testing.T) {
	h, adopted := attachHarness(t)
	if h.m.Init() == nil {
		t.Fatal("Init starts no attach")
	}
	f := h.frame()
	assertContains(t, "early frame", f, "configured-model", "/home/ada/project", "● connecting…", "connecting to the daemon…", "ctrl+c quit", "Ask SCV")
	h.submit("/cost")
	if f := h.frame(); !strings.Contains(f, "still connecting to the daemon: commands run once the session has started") {
		t.Errorf("a command while connecting is not refused:\n%s", f)
	}
	// A custom command is not listed before the session exists: it waits
	// too, instead of being called unknown.
	h.submit("/review")
	if f := h.frame(); strings.Contains(f, "unknown") || strings.Count(f, "still connecting to the daemon") != 2 {
		t.Errorf("a custom command while connecting is not told to wait:\n%s", f)
	}
	h.submit("first") // replaces the selected command
	h.submit("second")
	if f := h.frame(); !strings.Contains(f, "kept until the session starts: first") || !strings.Contains(f, "2 kept") {
		t.Errorf("kept prompts not shown:\n%s", f)
	}
	if len(*adopted) != 0 || len(h.rec.msgs) != 0 {
		t.Fatalf("sent before the session exists: %v, adopted %d", h.rec.msgs, len(*adopted))
	}
	started := proto.SessionStarted{SessionID: "s1", Cwd: "/home/ada/project", Model: "gpt-test", ContextMaxTokens: 128000}
	_, cmd := h.m.Update(AttachedMsg{Sender: h.rec, Session: started, Notice: "attached notice"})
	if cmd != nil {
		t.Errorf("attach returned a command")
	}
	if len(*adopted) != 1 || (*adopted)[0] != h.rec {
		t.Errorf("adopted %v, want the attached connection once", *adopted)
	}
	var turns []string
	for _, m := range h.rec.take() {
		if ts, ok := m.(*proto.TurnStart); ok {
			if ts.SessionID != "s1" {
				t.Errorf("turn.start for session %q", ts.SessionID)
			}
			turns = append(turns, ts.Prompt)
		}
	}
	if d := cmp.Diff([]string{"first", "second"}, turns); d != "" {
		t.Errorf("kept prompts sent (-want +got):\n%s", d)
	}
	f = h.frame()
	assertContains(t, "frame after the attach", f, "gpt-test", "● connected", "attached notice", "\nready")
	if strings.Contains(f, "connecting to the daemon…") || strings.Contains(f, "● connecting") {
		t.Errorf("still says connecting:\n%s", f)
	}
	// A second AttachedMsg (none comes; but if) changes nothing.
	if _, cmd := h.m.Update(AttachedMsg{Err: errors.New("late")}); cmd != nil || h.m.AttachErr() != nil {
		t.Error("a late attach result acted on a connected TUI")
	}
}

// A failed attach ends the TUI with its error, which names the prompts
// kept meanwhile (none is lost); at most 8 prompts are kept.
func TestEarlyAttachFails(t *testing.T) {
	h, _ := attachHarness(t)
	for i := range maxEarlyPrompts + 1 {
		h.submit(strings.Repeat("p", i+1))
	}
	if len(h.m.early) != maxEarlyPrompts {
		t.Errorf("%d prompts kept, want %d", len(h.m.early), maxEarlyPrompts)
	}
	if f := h.frame(); !strings.Contains(f, "at most 8 prompts are kept") {
		t.Errorf("the ninth prompt is not refused:\n%s", f)
	}
	if h.m.composer.Value() == "" {
		t.Error("the refused prompt was dropped from the composer")
	}
	_, cmd := h.m.Update(AttachedMsg{Err: errors.New("the daemon exited at start (exit status 1); see /x/daemon.log")})
	if cmd == nil {
		t.Fatal("a failed attach does not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("a failed attach's command is not quit")
	}
	if err := h.m.AttachErr(); err == nil || !strings.Contains(err.Error(), "daemon exited at start") {
		t.Errorf("AttachErr = %v", err)
	}
	if got := h.m.result().Unsent; len(got) != maxEarlyPrompts || got[0] != "p" || got[2] != "ppp" {
		t.Errorf("Unsent = %q, want the %d kept prompts", got, maxEarlyPrompts)
	}
}

// Each kept prompt goes with the images attached before it, a kept
// prompt is remembered once, "//" escapes a prompt that starts with a
// slash, and /help works while connecting (typed, not only from the menu).
func TestEarlyPromptsKeepTheirImages(t *testing.T) {
	h, _ := attachHarness(t)
	h.submit("/help")
	if f := h.frame(); strings.Contains(f, "still connecting") {
		t.Errorf("/help refused while connecting:\n%s", f)
	}
	h.submit("plain")
	h.m.images = []attachedImage{{path: "/home/ada/project/shot.png"}}
	h.submit("with image")
	h.submit("//slash first")
	h.m.images = []attachedImage{{path: "/home/ada/project/later.png"}} // for the next prompt, not a kept one
	h.m.Update(AttachedMsg{Sender: h.rec, Session: proto.SessionStarted{SessionID: "s1", ContextMaxTokens: 1000}})
	var got []string
	for _, m := range h.rec.take() {
		if ts, ok := m.(*proto.TurnStart); ok {
			var paths []string
			for _, im := range ts.Images {
				paths = append(paths, im.Path)
			}
			got = append(got, ts.Prompt+" "+strings.Join(paths, ","))
		}
	}
	want := []string{"plain ", "with image /home/ada/project/shot.png", "/slash first "}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("kept prompts and their images (-want +got):\n%s", d)
	}
	if len(h.m.images) != 1 || h.m.images[0].path != "/home/ada/project/later.png" {
		t.Errorf("the image attached for the next prompt was not kept for it: %v", h.m.images)
	}
	if d := cmp.Diff([]string{"/help", "plain", "with image", "/slash first"}, h.m.history); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
}

// A user who quits while connecting gets the kept prompts back on exit,
// and an attach that completes after the quit sends nothing.
func TestEarlyQuitKeepsPrompts(t *testing.T) {
	h, adopted := attachHarness(t)
	h.submit("kept prompt")
	if cmd := h.keys(ctrlC); cmd == nil {
		t.Fatal("ctrl+c with an empty composer does not quit while connecting")
	}
	h.m.Update(AttachedMsg{Sender: h.rec, Session: proto.SessionStarted{SessionID: "s1"}})
	if len(h.rec.msgs) != 0 || len(*adopted) != 0 {
		t.Errorf("an attach after the quit sent %v (adopted %d)", h.rec.msgs, len(*adopted))
	}
	if got := h.m.result().Unsent; len(got) != 1 || got[0] != "kept prompt" {
		t.Errorf("Unsent = %q", got)
	}
}

// A kept prompt over the session's prompt limit is not sent: it comes back
// in the composer, with the limit named; the others are sent.
func TestEarlyPromptOverLimit(t *testing.T) {
	h, _ := attachHarness(t)
	h.submit("far too long a prompt")
	h.submit("short")
	h.m.Update(AttachedMsg{Sender: h.rec, Session: proto.SessionStarted{SessionID: "s1", MaxPromptBytes: 10}})
	var sent []string
	for _, m := range h.rec.take() {
		if ts, ok := m.(*proto.TurnStart); ok {
			sent = append(sent, ts.Prompt)
		}
	}
	if d := cmp.Diff([]string{"short"}, sent); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if h.m.composer.Value() != "far too long a prompt" {
		t.Errorf("composer %q, want the refused prompt back", h.m.composer.Value())
	}
	if f := h.frame(); !strings.Contains(f, "over the 10-byte limit") {
		t.Errorf("no refusal naming the limit:\n%s", f)
	}
}
