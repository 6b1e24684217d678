package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestWritePreview: a write's plan carries the diff an approver reads —
// against the current file for replace, the head of the new file for
// create — and a note where there is no diff to show. Planning changes
// nothing on disk.
func TestWritePreview(t *testing.T) {
	ws := t.TempDir()
	testutil.Files(t, ws, map[string]string{
		"main.go":  "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		".env":     "TOKEN=secret-value\n",
		"link.go":  "->main.go",
		"readme":   "->.env",
		"dir/":     "",
		"same.txt": "same\n",
	})
	wr := NewWrite(Options{})
	plan := func(path, content, mode string) *tool.Diff {
		t.Helper()
		p, err := wr.Plan(tool.Env{Workspace: ws}, json.RawMessage(testutil.JSON(map[string]string{"path": path, "content": content, "mode": mode})))
		if err != nil {
			t.Fatalf("plan %s: %v", path, err)
		}
		return p.Diff
	}
	got := plan("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n", "replace")
	want := &tool.Diff{Path: "main.go", Added: 1, Removed: 1, Text: "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replace (-want +got):\n%s", d)
	}
	got = plan("new/file.txt", "a\nb\n", "create")
	want = &tool.Diff{Path: "new/file.txt", Added: 2, Text: "--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("create (-want +got):\n%s", d)
	}
	for _, c := range []struct{ path, mode, note string }{
		{".env", "replace", "a secret-like file: no diff is shown"},
		{"readme", "replace", "a secret-like file: no diff is shown"}, // a link to .env
		{"link.go", "replace", "a symbolic link: the write will be refused"},
		{"dir", "replace", "not a regular file"},
		{"missing.txt", "replace", "the file does not exist"},
		{"same.txt", "replace", "no change"},
	} {
		content := "TOKEN=other\n"
		if c.path == "same.txt" {
			content = "same\n"
		}
		d := plan(c.path, content, c.mode)
		if d.Text != "" || !strings.Contains(d.Note, c.note) {
			t.Errorf("%s: diff %+v, want no text and a note with %q", c.path, d, c.note)
		}
		if strings.Contains(d.Note+d.Text, "secret-value") {
			t.Errorf("%s: the secret's content is in the preview", c.path)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
		t.Error("planning a create made its directory")
	}
}
