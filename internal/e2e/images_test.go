package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
)

// TestExecImages: scv exec -i sends the file's exact bytes with the
// prompt; a bad file (text named .png, over 8 MiB, missing) is a usage
// error naming it before any request; the session database never holds
// the bytes; and a --continue after the file changed sends the note
// instead of the image.
func TestExecImages(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	noise := make([]byte, 2048)
	rand.Read(noise)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), noise...)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(in.ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("shot.png", png)
	write("notes.png", []byte("plain text\n"))
	write("huge.png", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 9<<20)...))

	for _, c := range []struct{ file, says string }{
		{"notes.png", "text/plain"},
		{"huge.png", "over the limit of 8 MiB"},
		{"gone.png", "no such file"},
	} {
		r := in.run(in.env, "", "exec", "-i", "shot.png", "--image", c.file, "what is this?")
		if r.code != 2 || !strings.Contains(r.stderr, c.file) || !strings.Contains(r.stderr, c.says) {
			t.Errorf("exec -i %s: exit %d, stderr %q; want 2 naming the file and %q", c.file, r.code, r.stderr, c.says)
		}
	}
	if n := len(fm.Requests()); n != 0 {
		t.Fatalf("the model got %d requests from refused runs", n)
	}

	fm.Script(modeltest.Text("a red dot"))
	r := in.run(in.env, "", "exec", "-i", "shot.png", "what is this?")
	if r.code != 0 || r.stdout != "a red dot\n" {
		t.Fatalf("exec -i shot.png: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	got := fm.Requests()[0].Images()
	if len(got) != 1 || got[0].MediaType != "image/png" || !bytes.Equal(got[0].Data, png) {
		t.Fatalf("the model got images %+v, want shot.png", got)
	}
	db := paths.Layout{Home: in.home}.Database()
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if bytes.Contains(b, noise[:32]) || bytes.Contains(b, []byte("\x89PNG")) {
			t.Errorf("%s holds the image's bytes", f)
		}
	}

	write("shot.png", append(png, "changed"...))
	fm.Script(modeltest.Text("ok"))
	if r := in.run(in.env, "", "exec", "--continue", "and now?"); r.code != 0 {
		t.Fatalf("exec --continue: exit %d stderr %s", r.code, r.stderr)
	}
	last := fm.Requests()[1]
	if n := len(last.Images()); n != 0 {
		t.Errorf("the continued turn sent %d images of a changed file", n)
	}
	if !strings.Contains(string(last.Raw), "[image "+filepath.Join(in.ws, "shot.png")+" changed since it was attached]") {
		t.Errorf("the continued turn lacks the note:\n%s", last.Raw)
	}
}
