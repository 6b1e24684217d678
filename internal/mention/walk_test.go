package mention

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mkTree makes files (name → content) under dir; a name ending in "/" is
// an empty directory.
func mkTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walkAll(t *testing.T, ws string, opts WalkOptions) ([]string, *Walker) {
	t.Helper()
	w, err := NewWalker(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	var got []string
	for !w.Done() {
		batch, err := w.Next(t.Context(), 3) // small batches: resumption is exercised
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, batch...)
	}
	slices.Sort(got)
	return got, w
}

func TestWalkRespectsGitignore(t *testing.T) {
	ws := t.TempDir()
	mkTree(t, ws, map[string]string{
		".gitignore":            "*.log\n/build/\nnode_modules\n!keep.log\n# a comment\n",
		".git/info/exclude":     "local-only.txt\n",
		".git/config":           "[core]\n",
		"main.go":               "",
		"debug.log":             "",
		"keep.log":              "",
		"local-only.txt":        "",
		"build/out.bin":         "",
		"sub/build/kept.go":     "", // /build/ is anchored at the root
		"sub/node_modules/x.js": "",
		"sub/.gitignore":        "secret/\n*.tmp\n",
		"sub/secret/a.txt":      "",
		"sub/b.tmp":             "",
		"sub/c.go":              "",
		"other/b.tmp":           "", // sub's rule does not reach other/
		"empty/":                "",
	})
	// Symbolic links are listed, never followed: a link to a directory
	// outside is no way out of the workspace.
	outside := t.TempDir()
	mkTree(t, outside, map[string]string{"far.txt": ""})
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(ws, "loop")); err != nil {
		t.Fatal(err)
	}
	got, w := walkAll(t, ws, WalkOptions{})
	want := []string{".gitignore", "empty/", "keep.log", "loop", "main.go", "other/", "other/b.tmp", "out",
		"sub/", "sub/.gitignore", "sub/build/", "sub/build/kept.go", "sub/c.go"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("walk (-want +got):\n%s", d)
	}
	if w.Limited() {
		t.Error("Limited() after a complete walk")
	}
}

func TestWalkBounds(t *testing.T) {
	ws := t.TempDir()
	mkTree(t, ws, map[string]string{"a/b/c/d.go": "", "a/x.go": "", "y.go": "", "z.go": ""})
	got, w := walkAll(t, ws, WalkOptions{MaxEntries: 3})
	if len(got) != 3 || !w.Limited() {
		t.Errorf("MaxEntries 3: got %v, limited %v", got, w.Limited())
	}
	// Breadth-first: the shallow paths come first.
	if d := cmp.Diff([]string{"a/", "y.go", "z.go"}, got); d != "" {
		t.Errorf("first paths (-want +got):\n%s", d)
	}
	got, _ = walkAll(t, ws, WalkOptions{Dir: "a", MaxDepth: 1})
	if d := cmp.Diff([]string{"a/b/", "a/x.go"}, got); d != "" {
		t.Errorf("Dir a, depth 1 (-want +got):\n%s", d)
	}
}

// The .gitignore files above the walked directory apply to it.
func TestWalkSubdirAppliesAncestorIgnores(t *testing.T) {
	ws := t.TempDir()
	mkTree(t, ws, map[string]string{".gitignore": "*.o\n", "a/.gitignore": "gen/\n", "a/b/x.o": "", "a/b/gen/y": "", "a/b/z.c": ""})
	got, _ := walkAll(t, ws, WalkOptions{Dir: "a/b"})
	if d := cmp.Diff([]string{"a/b/z.c"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestWalkCancelled(t *testing.T) {
	ws := t.TempDir()
	mkTree(t, ws, map[string]string{"a.go": ""})
	w, err := NewWalker(ws, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := withCancel(t)
	cancel()
	if _, err := w.Next(ctx, 0); err == nil {
		t.Error("Next with a cancelled context returned no error")
	}
}
