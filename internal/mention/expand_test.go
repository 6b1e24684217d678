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
	text, got := e.Expand(t.Context(), prompt)
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
	_, got := e.Expand(t.Context(), b.String())
	if len(got) != 12 || got[9].Refused != "" || !strings.HasPrefix(got[10].Refused, "more than 10 mentions") {
		t.Errorf("12 mentions: %+v", got)
	}
	text, got := e.Expand(t.Context(), "list @dir")
	if len(got) != 1 || got[0].Kind != proto.MentionDir || got[0].Path != "dir/" || !got[0].Truncated || got[0].Bytes > 50 {
		t.Fatalf("a directory: %+v", got)
	}
	if !strings.Contains(text, "<directory path=\"dir/\" entries=\"31\" truncated=\"first 6 entries\">\n.gitignore\nfaa.go\n") || strings.Contains(text, "x.o") {
		t.Errorf("listing:\n%s", text)
	}
	if text, got := e.Expand(t.Context(), "no mention here, mail a@b.txt"); text != "" || got != nil {
		t.Errorf("no mention: %q %v", text, got)
	}
}
