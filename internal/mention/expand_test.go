package mention_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tools/fs"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Mentions are read with the read tool's checks (fs.MentionSource):
// links are judged by what they resolve to, nothing outside the workspace
// is read, and each attachment is bounded.
func TestExpand(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	write(t, ws, "small.txt", "hello\n")
	write(t, ws, "big.txt", strings.Repeat("0123456789", 10)) // 100 bytes
	write(t, ws, ".gitignore", "ignored.txt\n")
	write(t, ws, "ignored.txt", "ignored but named\n")
	write(t, ws, ".env", "TOKEN=s3cr3t\n")
	write(t, ws, "keys/id_rsa", "PRIVATE\n")
	write(t, outside, "far.txt", "far away\n")
	if err := os.Symlink(".env", filepath.Join(ws, "README")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "far.txt"), filepath.Join(ws, "far")); err != nil {
		t.Fatal(err)
	}
	e := mention.Expander{Workspace: ws, Limit: 40, Source: fs.MentionSource(ws)}
	prompt := "see @small.txt. then @big.txt @ignored.txt @README @far @.env @keys/id_rsa @../x @/etc/passwd @nope.go @alice @small.txt"
	x := e.Expand(t.Context(), prompt, nil)
	text, got := x.Text, x.Mentions
	secret := "it looks like it holds secrets, so it is never attached; ask the agent to read it, which asks you first"
	want := []proto.Mention{
		{Path: "small.txt", Kind: "file", Bytes: 6},
		{Path: "big.txt", Kind: "file", Bytes: 40, Truncated: true},
		{Path: "ignored.txt", Kind: "file", Bytes: 18},
		{Path: "README", Kind: "file", Refused: secret},
		{Path: "far", Kind: "file", Refused: "it resolves through a symbolic link that leads outside the workspace; not attached"},
		{Path: ".env", Kind: "file", Refused: secret},
		{Path: "keys/id_rsa", Kind: "file", Refused: secret},
		{Path: "../x", Kind: "file", Refused: "it leads outside the workspace; only workspace paths are attached"},
		{Path: "/etc/passwd", Kind: "file", Refused: "absolute paths are not attached; mention a path relative to the workspace"},
		{Path: "nope.go", Kind: "file", Refused: "no such file or directory in the workspace"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mentions (-want +got):\n%s", d)
	}
	for _, never := range []string{"s3cr3t", "PRIVATE", "far away", "0123456789" + "0123456789" + "0123456789" + "0123456789" + "0"} {
		if strings.Contains(text, never) {
			t.Errorf("the attached text carries %q:\n%s", never, text)
		}
	}
	for _, want := range []string{"<file path=\"small.txt\" bytes=\"6\">\nhello\n</file>", "<file path=\"big.txt\" bytes=\"100\" truncated=\"first 40 bytes; read the rest with the read tool\">",
		"ignored but named", `<not-attached path=".env">`} {
		if !strings.Contains(text, want) {
			t.Errorf("the attached text lacks %q:\n%s", want, text)
		}
	}
}

func TestExpandBounds(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	for i := range 12 {
		name := string(rune('a'+i)) + ".txt"
		write(t, ws, name, name)
		b.WriteString("@" + name + " ")
	}
	for i := range 30 {
		write(t, ws, "dir/f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".go", "")
	}
	write(t, ws, "dir/.gitignore", "*.o\n")
	write(t, ws, "dir/x.o", "")
	e := mention.Expander{Workspace: ws, Limit: 50, Source: fs.MentionSource(ws)}
	got := e.Expand(t.Context(), b.String(), nil).Mentions
	if len(got) != 12 || got[9].Refused != "" || !strings.HasPrefix(got[10].Refused, "more than 10 mentions") {
		t.Errorf("12 mentions: %+v", got)
	}
	x := e.Expand(t.Context(), "list @dir", nil)
	text, got := x.Text, x.Mentions
	if len(got) != 1 || got[0].Kind != proto.MentionDir || got[0].Path != "dir/" || !got[0].Truncated || got[0].Bytes > 50 {
		t.Fatalf("a directory: %+v", got)
	}
	if !strings.Contains(text, "<directory path=\"dir/\" entries=\"31\" truncated=\"first 6 entries\">\n.gitignore\nfaa.go\n") || strings.Contains(text, "x.o") {
		t.Errorf("listing:\n%s", text)
	}
	if x := e.Expand(t.Context(), "no mention here, mail a@b.txt", nil); x.Text != "" || x.Mentions != nil {
		t.Errorf("no mention: %+v", x)
	}
}

// A mentioned image file (PNG, JPEG, GIF or WebP by its content, whatever
// its name) becomes an input image of the prompt, read with imagefile's
// limits; a bad one is refused with imagefile's reason, and a secret-like
// path is refused as secret before its content is looked at.
func TestExpandImages(t *testing.T) {
	ws := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x07", 100)
	gif := "GIF89a\x01\x00\x01\x00\x00\x00\x00;"
	write(t, ws, "shot.png", png)
	write(t, ws, "photo.dat", gif) // an image by content, not by name
	write(t, ws, "notes.png", "not a picture\n")
	write(t, ws, "empty.webp", "")
	write(t, ws, ".ssh/key.png", png)
	write(t, ws, ".env", png)
	if err := os.Symlink(".env", filepath.Join(ws, "logo.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "huge.png"), append([]byte(png), make([]byte, 8<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := "it looks like it holds secrets, so it is never attached; ask the agent to read it, which asks you first"
	e := mention.Expander{Workspace: ws, Limit: 40, Source: fs.MentionSource(ws)}
	x := e.Expand(t.Context(), "look at @shot.png and @photo.dat, @notes.png @empty.webp @.ssh/key.png @logo.png @huge.png", nil)
	want := []proto.Mention{
		{Path: "shot.png", Kind: "image", Bytes: int64(len(png))},
		{Path: "photo.dat", Kind: "image", Bytes: int64(len(gif))},
		{Path: "notes.png", Kind: "file", Refused: "image notes.png is text/plain; charset=utf-8 by its content, not PNG, JPEG, GIF or WebP (the name does not count); convert it to one of those"},
		{Path: "empty.webp", Kind: "file", Refused: "image empty.webp is empty; attach a PNG, JPEG, GIF or WebP file"},
		{Path: ".ssh/key.png", Kind: "file", Refused: secret},
		{Path: "logo.png", Kind: "file", Refused: secret},
		{Path: "huge.png", Kind: "file", Refused: "image huge.png is 8388724 bytes (8.0 MB), over the limit of 8 MiB (8388608 bytes); shrink or crop it"},
	}
	if d := cmp.Diff(want, x.Mentions); d != "" {
		t.Errorf("mentions (-want +got):\n%s", d)
	}
	if len(x.Images) != 2 || x.Images[0].Path != filepath.Join(ws, "shot.png") || string(x.Images[0].Data) != png || x.Images[0].MediaType != "image/png" ||
		x.Images[1].Path != filepath.Join(ws, "photo.dat") || x.Images[1].MediaType != "image/gif" || len(x.Images[0].SHA256) != 64 {
		t.Errorf("images %+v", x.Images)
	}
	for _, want := range []string{`<image path="shot.png" bytes="116" media_type="image/png">attached to this message as an input image</image>`, `<not-attached path="notes.png">image notes.png is text/plain`} {
		if !strings.Contains(x.Text, want) {
			t.Errorf("the attached text lacks %q:\n%s", want, x.Text)
		}
	}
	if strings.Contains(x.Text, "IHDR") || strings.Contains(x.Text, "GIF89a") {
		t.Errorf("an image's bytes are in the text:\n%s", x.Text)
	}

	// The images the prompt carries already count against the limits.
	for _, c := range []struct {
		name    string
		carried []int64
		refused string
	}{
		{"too many", make([]int64, 15), "the prompt would carry more than 16 images, the most one prompt takes; send fewer"},
		{"too big together", []int64{20<<20 - 120}, "the prompt's images are 20 MB together, over the limit of 20 MiB per prompt; send fewer or smaller ones"},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := e.Expand(t.Context(), "@shot.png @photo.dat", c.carried)
			if len(x.Mentions) != 2 || len(x.Images) != 1 || x.Mentions[0].Refused != "" || x.Mentions[1].Refused != c.refused || x.Mentions[1].Kind != "image" {
				t.Errorf("mentions %+v, %d images; want the second refused with %q", x.Mentions, len(x.Images), c.refused)
			}
		})
	}
}
