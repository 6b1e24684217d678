package fs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/scv-agent/scv/internal/diff"
	"github.com/scv-agent/scv/internal/tool"
)

// preview is the diff an approver reads before a write: the current file
// against the new content (replace), or the new file's head (create). It
// is for the person only and never reaches the model. A file that cannot
// be diffed gets a note instead; the write itself still reports the real
// error when it runs. A secret-like path gets no diff at all, so its
// content never travels in an approval.
func preview(workspace, rel, mode, content string) *tool.Diff {
	d := &tool.Diff{Path: rel}
	if SecretLike(rel) || secretTarget(workspace, rel) {
		d.Note = "a secret-like file: no diff is shown, so its content stays out of the approval"
		return d
	}
	var r diff.Result
	if mode == "create" {
		r = diff.Create(rel, []byte(content), diff.Bounds{})
	} else {
		old, note := current(workspace, rel)
		if note != "" {
			d.Note = note
			return d
		}
		r = diff.Replace(rel, old, true, []byte(content), diff.Bounds{})
	}
	d.Text, d.Note, d.Added, d.Removed, d.Omitted = r.Text, r.Note, r.Added, r.Removed, r.Omitted
	return d
}

// current reads the file a replace would overwrite, or says why it is not
// diffed.
func current(workspace, rel string) ([]byte, string) {
	root, fail := openRoot(workspace)
	if fail != nil {
		return nil, "the workspace cannot be opened: " + fail.Output
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "the file does not exist: the write will fail (mode replace needs an existing file)"
	case err != nil:
		return nil, "the current file cannot be read: " + ioFail(rel, err).Output
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, "a symbolic link: the write will be refused"
	case !fi.Mode().IsRegular():
		return nil, "not a regular file: the write will be refused"
	case fi.Size() > diff.DefaultMaxInput:
		return nil, fmt.Sprintf("the current file has %d bytes, more than the %d a diff is computed for", fi.Size(), diff.DefaultMaxInput)
	}
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return nil, "the current file cannot be read: " + ioFail(rel, err).Output
	}
	defer f.Close()
	old, err := io.ReadAll(io.LimitReader(f, diff.DefaultMaxInput+1))
	if err != nil {
		return nil, "the current file cannot be read: " + ioFail(rel, err).Output
	}
	return old, ""
}
