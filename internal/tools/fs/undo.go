package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/scv-agent/scv/internal/diff"
	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/tool"
)

// MaxUndoBytes is the largest earlier content a write keeps for undo; a
// larger file is recorded as changed but not undoable.
const MaxUndoBytes = 1 << 20

// keepBefore reads what rel holds before a write installs its content:
// nothing for a create, the bounded content for a replace.
func keepBefore(root *os.Root, rel, mode string) filechange.Change {
	c := filechange.Change{Path: rel}
	if mode == "create" {
		return c
	}
	c.Existed = true
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		c.Unkept = "its content before the write could not be read: " + err.Error()
		return c
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxUndoBytes+1))
	switch {
	case err != nil:
		c.Unkept = "its content before the write could not be read: " + err.Error()
	case len(b) > MaxUndoBytes:
		c.Unkept = fmt.Sprintf("it had more than %d bytes before the write, more than undo keeps", MaxUndoBytes)
	default:
		c.Before = b
	}
	return c
}

// Undo reverts changes in workspace (see tool.UndoFunc): every file is
// checked first — it must hold exactly what the change left, and its
// earlier content must have been kept — so a refusal changes nothing. The
// files are then restored with the write tool's atomic install (a
// temporary file, flushed, renamed), or removed when the change created
// them, all through the workspace's os.Root.
func Undo(ctx context.Context, workspace string, changes []filechange.Change, dryRun bool) ([]tool.FileUndo, error) {
	root, fail := openRoot(workspace)
	if fail != nil {
		return nil, errors.New(fail.Output)
	}
	defer root.Close()
	out := make([]tool.FileUndo, 0, len(changes))
	perms := make([]fs.FileMode, len(changes))
	// done marks files already as they were before the turn: an undo
	// that restored them and stopped before it was recorded is finished,
	// not refused.
	done := make([]bool, len(changes))
	for i, c := range changes {
		u, perm, already, err := checkUndo(root, c)
		if err != nil {
			return nil, err
		}
		out, perms[i], done[i] = append(out, u), perm, already
	}
	if dryRun {
		return out, nil
	}
	w := &writer{max: MaxUndoBytes}
	for i, c := range changes {
		if err := ctx.Err(); err != nil {
			return out[:i], fmt.Errorf("undo cancelled after %d of %d files", i, len(changes))
		}
		if done[i] {
			continue
		}
		if err := revert(ctx, w, root, c, perms[i]); err != nil {
			return out[:i], fmt.Errorf("%w (%d of %d files were undone)", err, i, len(changes))
		}
	}
	return out, nil
}

// checkUndo checks that change c can be undone and returns what undoing it
// does, with its diff, the file's permissions, and done when the file is
// already as it was before the turn. A file that cannot
// be undone is an *tool.UndoConflict.
func checkUndo(root *os.Root, c filechange.Change) (u tool.FileUndo, perm fs.FileMode, done bool, err error) {
	if _, terr := cleanPath(c.Path); terr != nil {
		return u, 0, false, &tool.UndoConflict{Reason: fmt.Sprintf("%s: %s", c.Path, terr.Message)}
	}
	if c.Unkept != "" {
		return u, 0, false, &tool.UndoConflict{Reason: fmt.Sprintf("%s cannot be undone: %s", c.Path, c.Unkept)}
	}
	u = tool.FileUndo{Path: c.Path, Remove: !c.Existed}
	already := &tool.Diff{Path: c.Path, Note: "already as it was before the turn (an earlier undo stopped before it was recorded)"}
	if _, err := root.Lstat(c.Path); !c.Existed && errors.Is(err, fs.ErrNotExist) {
		u.Diff = already
		return u, 0, true, nil
	}
	fi, res, ok := existingFile(root, c.Path)
	if !ok {
		return u, 0, false, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it (%s); nothing was undone", c.Path, res.Output)}
	}
	perm = fi.Mode().Perm()
	cur, err := readBounded(root, c.Path)
	if err != nil {
		return u, 0, false, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it (%v); nothing was undone", c.Path, err)}
	}
	if sum := sha256.Sum256(cur); hex.EncodeToString(sum[:]) != c.After {
		if c.Existed && bytes.Equal(cur, c.Before) {
			u.Diff = already
			return u, perm, true, nil
		}
		return u, 0, false, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it; nothing was undone (restore it yourself, or undo after putting back what the turn wrote)", c.Path)}
	}
	var r diff.Result
	if c.Existed {
		r = diff.Replace(c.Path, cur, true, c.Before, diff.Bounds{})
	} else {
		r = diff.Replace(c.Path, cur, true, nil, diff.Bounds{})
	}
	u.Diff = &tool.Diff{Path: c.Path, Text: r.Text, Note: r.Note, Added: r.Added, Removed: r.Removed, Omitted: r.Omitted}
	if SecretLike(c.Path) {
		u.Diff = &tool.Diff{Path: c.Path, Note: "a secret-like file: no diff is shown"}
	}
	return u, perm, false, nil
}

// revert undoes checked change c: a created file is removed, a replaced
// one gets its earlier content back (with perm) by the write tool's atomic
// install; the directory is synced either way.
func revert(ctx context.Context, w *writer, root *os.Root, c filechange.Change, perm fs.FileMode) error {
	dir := path.Dir(c.Path)
	if !c.Existed {
		if err := root.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", c.Path, err)
		}
		syncDir(root, dir)
		return nil
	}
	tmp, err := w.writeTemp(ctx, root, dir, string(c.Before), perm, true)
	if err == nil {
		if err = root.Rename(tmp, c.Path); err != nil {
			_ = root.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", c.Path, err)
	}
	syncDir(root, dir)
	return nil
}

// readBounded reads a file the turn wrote; one larger than a write can
// produce has changed since.
func readBounded(root *os.Root, rel string) ([]byte, error) {
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20+1))
	if err == nil && len(b) > 64<<20 {
		err = errors.New("it is larger than any write")
	}
	return b, err
}
