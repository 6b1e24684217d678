package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

var pngA = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR first")

func attach(t *testing.T, path string, data []byte) model.Image {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := imagefile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return model.Image{Path: f.Path, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, Data: f.Data}
}

// TestImageTurnAndResume: an image goes to the model with its prompt, the
// stored history holds its path and hash but never its bytes, and a
// resumed session sends it again only while the file is unchanged; a
// changed or missing file becomes a note in the prompt's text.
func TestImageTurnAndResume(t *testing.T) {
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	im := attach(t, shot, pngA)
	fm := &fakeModel{script: []step{text("a cat")}}
	s := newSession(t, fm, nil, approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurnImages(t.Context(), "t1", "what is this?", []model.Image{im}, rec.emit)
	if _, ok := rec.last().(*proto.TurnCompleted); !ok {
		t.Fatalf("turn ended with %T", rec.last())
	}
	sent := fm.requests[0].Messages[0]
	if sent.Content != "what is this?" || len(sent.Images) != 1 || !bytes.Equal(sent.Images[0].Data, pngA) {
		t.Fatalf("the model got %+v", sent)
	}
	stored, err := s.History()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stored[0]), `"sha256":"`+im.SHA256+`"`) || !strings.Contains(string(stored[0]), shot) {
		t.Errorf("stored message lacks the image's path and hash: %s", stored[0])
	}
	if bytes.Contains(stored[0], []byte("PNG")) || bytes.Contains(stored[0], []byte("iVBOR")) {
		t.Errorf("stored message holds the image's bytes: %s", stored[0])
	}

	resume := func(t *testing.T) model.Message {
		t.Helper()
		fm := &fakeModel{script: []step{text("again")}}
		r := newSession(t, fm, nil, approval.AskOnRisk)
		if err := r.LoadHistory(stored); err != nil {
			t.Fatal(err)
		}
		r.RunTurn(t.Context(), "t2", "and now?", (&recorder{}).emit)
		return fm.requests[0].Messages[0]
	}
	t.Run("unchanged", func(t *testing.T) {
		m := resume(t)
		if len(m.Images) != 1 || !bytes.Equal(m.Images[0].Data, pngA) || m.Content != "what is this?" {
			t.Errorf("resumed prompt %+v, want the image again", m)
		}
	})
	t.Run("changed", func(t *testing.T) {
		if err := os.WriteFile(shot, append(bytes.Clone(pngA), "edited"...), 0o600); err != nil {
			t.Fatal(err)
		}
		m := resume(t)
		want := "what is this?\n[image " + shot + " changed since it was attached]"
		if len(m.Images) != 0 || m.Content != want {
			t.Errorf("resumed prompt %q with %d images, want %q and none", m.Content, len(m.Images), want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if err := os.Remove(shot); err != nil {
			t.Fatal(err)
		}
		m := resume(t)
		if len(m.Images) != 0 || !strings.Contains(m.Content, "[image "+shot+" is missing") {
			t.Errorf("resumed prompt %q with %d images, want the missing note", m.Content, len(m.Images))
		}
	})
}

// TestImageCountsInHistoryBytes: an image adds its fixed estimate to the
// history's bytes, not its file size.
func TestImageCountsInHistoryBytes(t *testing.T) {
	a := messageBytes(model.Message{Role: model.User, Content: "x"})
	b := messageBytes(model.Message{Role: model.User, Content: "x", Images: []model.Image{{Data: make([]byte, 1<<20)}}})
	if b-a != imageBytes {
		t.Errorf("an image adds %d bytes, want %d", b-a, imageBytes)
	}
}
