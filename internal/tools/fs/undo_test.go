package fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/tool"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestUndo covers what the conversations do not: an unkept file, a file
// turned into a symbolic link, a path that climbs out, and that a restore
// keeps the file's mode and a secret-like file's diff shows no content.
func TestUndo(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(ws, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("run.sh", "new\n", 0o750)
	write(".env", "TOKEN=new\n", 0o600)
	changes := []filechange.Change{
		{Path: "run.sh", Existed: true, Before: []byte("old\n"), After: sum("new\n")},
		{Path: ".env", Existed: true, Before: []byte("TOKEN=old\n"), After: sum("TOKEN=new\n")},
	}
	files, err := Undo(ctx, ws, changes, false)
	if err != nil || len(files) != 2 {
		t.Fatalf("undo: %+v, %v", files, err)
	}
	if d := files[1].Diff; d == nil || d.Text != "" || strings.Contains(d.Note, "TOKEN") {
		t.Errorf("secret-like diff: %+v", d)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "run.sh"))
	fi, _ := os.Stat(filepath.Join(ws, "run.sh"))
	if string(b) != "old\n" || fi.Mode().Perm() != 0o750 {
		t.Errorf("run.sh after undo: %q mode %v", b, fi.Mode().Perm())
	}

	refused := func(name string, cs []filechange.Change, want string) {
		t.Helper()
		_, err := Undo(ctx, ws, cs, false)
		var c *tool.UndoConflict
		if !errors.As(err, &c) || !strings.Contains(c.Reason, want) {
			t.Errorf("%s: %v, want a conflict containing %q", name, err, want)
		}
	}
	write("big.bin", "x", 0o644)
	write("keep.txt", "turn\n", 0o644)
	refused("unkept", []filechange.Change{
		{Path: "keep.txt", Existed: true, Before: []byte("before\n"), After: sum("turn\n")},
		{Path: "big.bin", Existed: true, Unkept: "over 1 MiB", After: sum("x")},
	}, "big.bin cannot be undone: over 1 MiB")
	if b, _ := os.ReadFile(filepath.Join(ws, "keep.txt")); string(b) != "turn\n" {
		t.Errorf("a refused undo changed keep.txt: %q", b)
	}
	if err := os.Symlink("keep.txt", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	refused("symlink", []filechange.Change{{Path: "link.txt", After: sum("turn\n")}}, "link.txt changed since the turn wrote it")
	refused("outside", []filechange.Change{{Path: "../x", After: sum("")}}, "../x")
	if _, err := os.Lstat(filepath.Join(ws, "link.txt")); err != nil {
		t.Errorf("the link was touched: %v", err)
	}
}

// TestUndoFinishesAnInterruptedUndo: files already back to their content
// before the turn (an undo restored them, then its process died before
// the store recorded it) are not a conflict; the rest is undone.
func TestUndoFinishesAnInterruptedUndo(t *testing.T) {
	ws := t.TempDir()
	for name, content := range map[string]string{"a.txt": "before\n", "c.txt": "turn c\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changes := []filechange.Change{
		{Path: "a.txt", Existed: true, Before: []byte("before\n"), After: sum("turn a\n")}, // restored already
		{Path: "b.txt", After: sum("created\n")},                                           // removed already
		{Path: "c.txt", Existed: true, Before: []byte("before c\n"), After: sum("turn c\n")},
	}
	files, err := Undo(context.Background(), ws, changes, false)
	if err != nil || len(files) != 3 || !strings.Contains(files[0].Diff.Note, "already") || !strings.Contains(files[1].Diff.Note, "already") {
		t.Fatalf("undo: %+v, %v", files, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "c.txt")); string(b) != "before c\n" {
		t.Errorf("c.txt = %q", b)
	}
}
