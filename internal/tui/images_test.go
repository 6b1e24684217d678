package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// imageHarness is a harness whose session workspace is a temporary
// directory holding shot.png (120 KiB, a PNG by content) and notes.png
// (text).
func imageHarness(t *testing.T) (*harness, string) {
	t.Helper()
	ws := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 120*1024-16)...)
	if err := os.WriteFile(filepath.Join(ws, "shot.png"), png, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.png"), []byte("text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Session.Cwd = ws })
	return h, ws
}

func sentStarts(h *harness) []*proto.TurnStart {
	var out []*proto.TurnStart
	for _, m := range h.rec.take() {
		if ts, ok := m.(*proto.TurnStart); ok {
			out = append(out, ts)
		}
	}
	return out
}

// TestImageCommand: /image PATH attaches a file, the next prompt carries
// it (by absolute path) and shows its chip, and the one after does not;
// a file that is no image is refused when attached, naming it.
func TestImageCommand(t *testing.T) {
	h, ws := imageHarness(t)
	h.submit("/image notes.png")
	if f := h.frame(); !strings.Contains(f, "notes.png") || !strings.Contains(f, "nothing was attached") {
		t.Errorf("a text file was not refused:\n%s", f)
	}
	h.submit("/image shot.png")
	if f := h.frame(); !strings.Contains(f, "[image shot.png 120 KB] attached to the next prompt") {
		t.Errorf("no chip after /image:\n%s", f)
	}
	h.rec.take()
	h.keys(enter)
	if f := h.frame(); !strings.Contains(f, "type a prompt to send with the attached images") || len(h.rec.take()) != 0 {
		t.Errorf("Enter on an empty composer with an image attached:\n%s", f)
	}
	h.prompt("what is this?", "t1")
	got := sentStarts(h)
	want := []*proto.TurnStart{{Envelope: proto.Envelope{RequestID: got[0].RequestID}, SessionID: "s1", Prompt: "what is this?",
		Images: []proto.Image{{Path: filepath.Join(ws, "shot.png")}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	f := h.frame()
	if i, j := strings.Index(f, "what is this?"), strings.LastIndex(f, "[image shot.png 120 KB]"); i < 0 || j < i {
		t.Errorf("the prompt's chip is not under it:\n%s", f)
	}
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	h.prompt("and now?", "t2")
	if got := sentStarts(h); len(got) != 1 || len(got[0].Images) != 0 {
		t.Errorf("the second prompt carries %+v", got)
	}
}

// TestPasteImagePath: pasting the path of an image file (as a terminal
// pastes a dropped file) attaches it instead of typing it; any other
// paste is text.
func TestPasteImagePath(t *testing.T) {
	h, ws := imageHarness(t)
	h.m.Update(tea.PasteMsg{Content: "'" + filepath.Join(ws, "shot.png") + "'"})
	if v := h.m.composer.Value(); v != "" {
		t.Errorf("the path was typed: %q", v)
	}
	if len(h.m.images) != 1 {
		t.Fatalf("attached %d images, want 1", len(h.m.images))
	}
	h.m.Update(tea.PasteMsg{Content: "see gone.png"})
	if v := h.m.composer.Value(); v != "see gone.png" || len(h.m.images) != 1 {
		t.Errorf("a text paste: composer %q, %d images", v, len(h.m.images))
	}
	h.m.composer.Reset()
	h.submit("/image clear")
	if len(h.m.images) != 0 {
		t.Errorf("/image clear left %d images", len(h.m.images))
	}
}

// TestReplayShowsImageChips: a stored turn's images appear as chips under
// its prompt.
func TestReplayShowsImageChips(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Resumed = &proto.SessionResumed{SessionID: "s1", Cwd: "/w", Model: "m", Turns: []proto.StoredTurn{{TurnID: "t1", N: 1, Prompt: "look", State: "completed",
			Images: []proto.Image{{Path: "/w/cat.jpg", MediaType: "image/jpeg", Size: 2048, SHA256: "ab"}}}}}
	})
	if f := h.frame(); !strings.Contains(f, "[image cat.jpg 2 KB]") {
		t.Errorf("no chip in the replayed transcript:\n%s", f)
	}
}
