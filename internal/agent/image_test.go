package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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

// TestOnlyNewestImagesResent: a request resends at most maxSentImages
// images and 20 MiB of them, newest first; an older one is a note in its
// message and its bytes are let go, the history's text unchanged.
func TestOnlyNewestImagesResent(t *testing.T) {
	for _, c := range []struct {
		name        string
		n           int
		size        int
		wantSent    int
		wantLeftOut int
	}{
		{"count", maxSentImages + 2, 10, maxSentImages, 2},
		{"bytes", 3, 8 << 20, 2, 1},
		{"within", 3, 10, 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm := &fakeModel{script: []step{text("ok")}}
			s := newSession(t, fm, nil, approval.AskOnRisk)
			for i := range c.n {
				p := filepath.Join("/shots", "s"+strconv.Itoa(i)+".png")
				s.hist.append(model.Message{Role: model.User, Content: "look", Images: []model.Image{{Path: p, MediaType: imagefile.PNG, Size: int64(c.size), Data: make([]byte, c.size)}}}, true)
				s.hist.append(model.Message{Role: model.Assistant, Content: "seen"}, true)
			}
			s.RunTurn(t.Context(), "t1", "and all of them?", (&recorder{}).emit)
			sent, leftOut := 0, 0
			for _, m := range fm.requests[0].Messages {
				sent += len(m.Images)
				leftOut += strings.Count(m.Content, "left out: only the newest")
			}
			if sent != c.wantSent || leftOut != c.wantLeftOut {
				t.Errorf("sent %d images and %d notes, want %d and %d", sent, leftOut, c.wantSent, c.wantLeftOut)
			}
			if c.wantLeftOut > 0 {
				first := fm.requests[0].Messages[0]
				if len(first.Images) != 0 || !strings.Contains(first.Content, LeftOutImageNote("/shots/s0.png")) {
					t.Errorf("the oldest image was not the one left out: %+v", first)
				}
				if h := s.hist.msgs[0]; h.Content != "look" || len(h.Images) != 1 || h.Images[0].Data != nil {
					t.Errorf("history message %+v: want its text unchanged and its bytes let go", h)
				}
			}
		})
	}
}
