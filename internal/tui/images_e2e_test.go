package tui_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestImageUnderTmux: in the real binary, /image with a relative path
// shows its chip, and the next prompt sends the file's bytes to the
// model; a pasted path (tmux's paste buffer, a bracketed paste) attaches
// a second image the same way.
func TestImageUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 3000)...)
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	writeFile(t, ws, "shot.png", string(png))
	writeFile(t, ws, "dot.gif", string(gif))
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("A grey square."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.submit("/image shot.png")
	p.waitFor("[image shot.png 2.9 KB] attached to the next prompt")
	p.tmux("set-buffer", "-b", "img", filepath.Join(ws, "dot.gif"))
	p.tmux("paste-buffer", "-p", "-b", "img", "-t", "e2e")
	p.waitFor("[image dot.gif 14 B] attached to the next prompt")
	p.submit("what is this?")
	p.waitFor("A grey square.", "[image shot.png 2.9 KB] [image dot.gif 14 B]", "ready")
	got := fake.Requests()[0].Images()
	if len(got) != 2 || !bytes.Equal(got[0].Data, png) || got[1].MediaType != "image/gif" || !bytes.Equal(got[1].Data, gif) {
		t.Errorf("the model got images %+v, want shot.png then dot.gif", got)
	}
	p.quit()
}

// TestMentionedImageUnderTmux: in the real binary, `@shot.png` in a
// prompt sends the file's bytes to the model as an input image, and the
// transcript shows its image chip.
func TestMentionedImageUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{9}, 5000)...)
	writeFile(t, ws, "shot.png", string(png))
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("A striped square."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.submit("look at @shot.png ")
	p.waitFor("A striped square.", "[@shot.png · image 4.9 KB]", "ready")
	got := fake.Requests()[0].Images()
	if len(got) != 1 || got[0].MediaType != "image/png" || !bytes.Equal(got[0].Data, png) {
		t.Errorf("the model got images %+v, want shot.png", got)
	}
	p.quit()
}
