package imagefile_test

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/imagefile"
)

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webp is the smallest lossless WebP header: RIFF, size, WEBP, VP8L chunk.
var webp = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

func TestReadAccepts(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		data []byte
		want string
	}{
		// The names lie on purpose: the content decides.
		"a.jpg":  {encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }), imagefile.PNG},
		"b.png":  {encoded(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }), imagefile.JPEG},
		"c":      {encoded(t, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) }), imagefile.GIF},
		"d.webp": {webp, imagefile.WebP},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := imagefile.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			if f.MediaType != c.want || f.Size != int64(len(c.data)) || !bytes.Equal(f.Data, c.data) || len(f.SHA256) != 64 || f.Path != p {
				t.Fatalf("Read = %+v, want %s of %d bytes", f, c.want, len(c.data))
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 9<<20)...)
	cases := []struct {
		name, path string
		want       []string
	}{
		{"text renamed png", write("notes.png", []byte("just some text\n")), []string{"notes.png", "text/plain", "not PNG, JPEG, GIF or WebP"}},
		{"9 MiB png", write("huge.png", big), []string{"huge.png", "9437192 bytes", "9.0 MB", "over the limit of 8 MiB"}},
		{"missing", filepath.Join(dir, "gone.png"), []string{"gone.png", "no such file"}},
		{"directory", dir, []string{dir, "not a regular file"}},
		{"empty", write("empty.png", nil), []string{"empty.png", "is empty"}},
		{"pdf", write("doc.png", []byte("%PDF-1.4\n")), []string{"doc.png", "application/pdf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := imagefile.Read(c.path)
			if err == nil {
				t.Fatal("Read accepted it")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestResolveAndChip(t *testing.T) {
	if got := imagefile.Resolve("/ws", "/home/u", "shots/a.png"); got != "/ws/shots/a.png" {
		t.Errorf("relative: %s", got)
	}
	if got := imagefile.Resolve("/ws", "/home/u", "~/a.png"); got != "/home/u/a.png" {
		t.Errorf("home: %s", got)
	}
	if got := imagefile.Resolve("/ws", "/home/u", "/tmp/../x/a.png"); got != "/x/a.png" {
		t.Errorf("absolute: %s", got)
	}
	if got := imagefile.Chip("/x/shot.png", 120*1024); got != "[image shot.png 120 KB]" {
		t.Errorf("chip: %s", got)
	}
	if got := imagefile.Size(1536); got != "1.5 KB" {
		t.Errorf("size: %s", got)
	}
	if !imagefile.HasImageName("A.JPEG") || imagefile.HasImageName("a.txt") {
		t.Error("HasImageName")
	}
}

func TestCheckTotal(t *testing.T) {
	if err := imagefile.CheckTotal(8<<20, 8<<20, 4<<20); err != nil {
		t.Errorf("20 MiB together refused: %v", err)
	}
	err := imagefile.CheckTotal(8<<20, 8<<20, 4<<20+1)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 20 MiB per prompt") {
		t.Errorf("over 20 MiB: %v", err)
	}
}
