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
	"github.com/scv-agent/scv/internal/tool"
)

// MaxUndoBytes is the largest earlier content a write keeps for undo; a
// larger file is recorded as changed but not undoable.
const MaxUndoBytes = 1 << 20

// keepBefore reads what rel holds before a write installs its content:
// nothing for a create, the bounded content for a replace.
func keepBefore(root *os.Root, rel, mode string) tool.FileChange {
	c := tool.FileChange{Path: rel}
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
func Undo(ctx context.Context, workspace string, changes []tool.FileChange, dryRun bool) ([]tool.FileUndo, error) {
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
		if _, terr := cleanPath(c.Path); terr != nil {
			return nil, &tool.UndoConflict{Reason: fmt.Sprintf("%s: %s", c.Path, terr.Message)}
		}
		if c.Unkept != "" {
			return nil, &tool.UndoConflict{Reason: fmt.Sprintf("%s cannot be undone: %s", c.Path, c.Unkept)}
		}
		u := tool.FileUndo{Path: c.Path, Remove: !c.Existed}
		already := &tool.Diff{Path: c.Path, Note: "already as it was before the turn (an earlier undo stopped before it was recorded)"}
		if _, err := root.Lstat(c.Path); !c.Existed && errors.Is(err, fs.ErrNotExist) {
			u.Diff, done[i] = already, true
			out = append(out, u)
			continue
		}
		fi, res, ok := existingFile(root, c.Path)
		if !ok {
			return nil, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it (%s); nothing was undone", c.Path, res.Output)}
		}
		perms[i] = fi.Mode().Perm()
		cur, err := readBounded(root, c.Path)
		if err != nil {
			return nil, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it (%v); nothing was undone", c.Path, err)}
		}
		if sum := sha256.Sum256(cur); hex.EncodeToString(sum[:]) != c.After {
			if c.Existed && bytes.Equal(cur, c.Before) {
				u.Diff, done[i] = already, true
				out = append(out, u)
				continue
			}
			return nil, &tool.UndoConflict{Reason: fmt.Sprintf("%s changed since the turn wrote it; nothing was undone (restore it yourself, or undo after putting back what the turn wrote)", c.Path)}
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
		out = append(out, u)
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
		if !c.Existed {
			if err := root.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return out[:i], fmt.Errorf("remove %s: %w (%d of %d files were undone)", c.Path, err, i, len(changes))
			}
			syncDir(root, path.Dir(c.Path))
			continue
		}
		dir := path.Dir(c.Path)
		tmp, err := w.writeTemp(ctx, root, dir, string(c.Before), perms[i], true)
		if err == nil {
			if err = root.Rename(tmp, c.Path); err != nil {
				_ = root.Remove(tmp)
			}
		}
		if err != nil {
			return out[:i], fmt.Errorf("restore %s: %w (%d of %d files were undone)", c.Path, err, i, len(changes))
		}
		syncDir(root, dir)
	}
	return out, nil
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
