package server_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// startImages is turn.start with images, run to its terminal event.
func startImages(t *testing.T, c *client.Conn, sid, prompt string, paths ...string) proto.Event {
	t.Helper()
	var ims []proto.Image
	for _, p := range paths {
		ims = append(ims, proto.Image{Path: p})
	}
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: prompt, Images: ims}); err != nil {
		t.Fatal(err)
	}
	for ev := range c.Events() {
		switch ev.(type) {
		case *proto.TurnCompleted, *proto.TurnFailed, *proto.TurnCancelled:
			return ev
		}
	}
	t.Fatalf("connection ended: %v", c.Err())
	return nil
}

// TestImagesStoredByPathAndHash: an image named in turn.start (relative
// to the workspace) reaches the model as its exact bytes; the session
// database holds its path and hash but not a byte of it; a resumed
// session lists it with the turn, and once the file changed the model
// gets the note instead of the image. A file that is no image refuses
// the turn.start, naming it, and the model is not asked.
func TestImagesStoredByPathAndHash(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("a red dot"))
	fake.Script(modeltest.Text("noted"))
	srv, ws, home := newTestServerWith(t, fake, "", server.Options{})

	noise := make([]byte, 4096)
	rand.Read(noise)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), noise...)
	shot := filepath.Join(ws, "shot.png")
	if err := os.WriteFile(shot, png, 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "notes.png", "not a picture\n")

	c, end := connect(t, srv)
	started := startSession(t, c, ws)
	sid := started.SessionID
	if _, ok := startImages(t, c, sid, "what is this?", "shot.png").(*proto.TurnCompleted); !ok {
		t.Fatal("the turn with an image did not complete")
	}
	got := fake.Requests()[0].Images()
	if len(got) != 1 || got[0].MediaType != "image/png" || !bytes.Equal(got[0].Data, png) {
		t.Fatalf("the model got images %+v, want shot.png's bytes", got)
	}

	_, err := c.Call(t.Context(), &proto.TurnStart{SessionID: sid, Prompt: "and this?", Images: []proto.Image{{Path: "notes.png"}}})
	var re *client.RequestError
	if !errors.As(err, &re) || re.Code != proto.ErrInvalidRequest || !strings.Contains(re.Message, filepath.Join(ws, "notes.png")) || !strings.Contains(re.Message, "text/plain") {
		t.Fatalf("turn.start with a text file as image: %v, want invalid_request naming it and its type", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1", n)
	}
	end()

	db := paths.Layout{Home: home}.Database()
	b64 := base64.StdEncoding.EncodeToString(png)[:64]
	var all []byte
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, noise[:64]) || bytes.Contains(b, []byte(b64)) || bytes.Contains(b, []byte("\x89PNG")) {
			t.Errorf("%s holds the image's bytes", f)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(shot)) {
		t.Error("the database does not hold the image's path")
	}

	if err := os.WriteFile(shot, append(png, "edited"...), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ = connect(t, srv)
	res := resume(t, c, sid)
	if len(res.Turns) != 1 || len(res.Turns[0].Images) != 1 {
		t.Fatalf("session.resumed turns %+v, want one with one image", res.Turns)
	}
	im := res.Turns[0].Images[0]
	if im.Path != shot || im.MediaType != "image/png" || im.Size != int64(len(png)) || len(im.SHA256) != 64 {
		t.Errorf("stored image %+v", im)
	}
	if _, ok := turn(t, c, sid, "still there?").(*proto.TurnCompleted); !ok {
		t.Fatal("the resumed turn did not complete")
	}
	last := fake.Requests()[1]
	if n := len(last.Images()); n != 0 {
		t.Errorf("the resumed request sent %d images of a changed file", n)
	}
	if in := input(t, last); !strings.Contains(in, "[image "+shot+" changed since it was attached]") {
		t.Errorf("the resumed request lacks the changed note:\n%s", in)
	}
}

// TestMentionedImageStored: `@shot.png` in a prompt that also carries an
// image of its own sends both to the model (the prompt's own first), the
// turn.started mention says image, and the session database records both
// with the turn by path and hash, so a resume lists them.
func TestMentionedImageStored(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("two pictures"))
	srv, ws := newTestServer(t, fake, "")
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x05", 200)
	gif := "GIF89a\x01\x00\x01\x00\x00\x00\x00;"
	writeFile(t, ws, "shot.png", png)
	writeFile(t, ws, "dot.gif", gif)

	c, end := connect(t, srv)
	started := startSession(t, c, ws)
	sid := started.SessionID
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: "compare @shot.png", Images: []proto.Image{{Path: "dot.gif"}}}); err != nil {
		t.Fatal(err)
	}
	var mentions []proto.Mention
	for ev := range c.Events() {
		if st, ok := ev.(*proto.TurnStarted); ok {
			mentions = st.Mentions
		}
		if _, ok := ev.(*proto.TurnCompleted); ok {
			break
		}
		if _, ok := ev.(*proto.TurnFailed); ok {
			t.Fatalf("turn failed: %+v", ev)
		}
	}
	if want := []proto.Mention{{Path: "shot.png", Kind: proto.MentionImage, Bytes: int64(len(png))}}; !cmp.Equal(mentions, want) {
		t.Errorf("turn.started mentions %+v, want %+v", mentions, want)
	}
	got := fake.Requests()[0].Images()
	if len(got) != 2 || string(got[0].Data) != gif || got[1].MediaType != "image/png" || string(got[1].Data) != png {
		t.Fatalf("the model got images %+v, want dot.gif then shot.png", got)
	}
	end()

	c, _ = connect(t, srv)
	res := resume(t, c, sid)
	if len(res.Turns) != 1 || len(res.Turns[0].Images) != 2 {
		t.Fatalf("session.resumed turns %+v, want one with two images", res.Turns)
	}
	ims := res.Turns[0].Images
	if ims[0].Path != filepath.Join(ws, "dot.gif") || ims[1].Path != filepath.Join(ws, "shot.png") || ims[1].Size != int64(len(png)) || len(ims[1].SHA256) != 64 {
		t.Errorf("stored images %+v", ims)
	}
}
