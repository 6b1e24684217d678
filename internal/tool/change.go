package tool

import "context"

// FileChange is what one tool call did to one workspace file, kept so the
// change can be undone: the content before the call and a hash of what it
// left. A turn's changes to one path merge into one FileChange (the
// content before the turn, the hash of the last write).
type FileChange struct {
	// Path is workspace-relative, in slash form.
	Path string
	// Existed says the file existed before; Before is its content then.
	Existed bool
	Before  []byte
	// Unkept, when set, says why Before was not kept (a file over the
	// undo limit, an unreadable one): the change cannot be undone.
	Unkept string
	// After is the lowercase hex SHA-256 of the content the call left.
	After string
}

// FileUndo is what undoing one FileChange does (or would do).
type FileUndo struct {
	Path string
	// Remove says the file is removed (the turn created it); otherwise
	// its content before the turn is restored.
	Remove bool
	// Diff is the change from the current file to the restored one.
	Diff *Diff
}

// UndoFunc checks changes against the workspace and, unless dryRun,
// reverts them: every file must still have the content the change left,
// or nothing is changed and the returned *UndoConflict names the file.
type UndoFunc func(ctx context.Context, workspace string, changes []FileChange, dryRun bool) ([]FileUndo, error)

// UndoConflict is an undo refused before anything changed.
type UndoConflict struct{ Reason string }

func (e *UndoConflict) Error() string { return e.Reason }
