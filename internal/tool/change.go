package tool

import (
	"context"

	"github.com/scv-agent/scv/internal/filechange"
)

// FileUndo is what undoing one filechange.Change does (or would do). It
// is the undo's own result; the server makes its wire form
// (proto.UndoFile) when it answers session.undo.
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
type UndoFunc func(ctx context.Context, workspace string, changes []filechange.Change, dryRun bool) ([]FileUndo, error)

// UndoConflict is an undo refused before anything changed.
type UndoConflict struct{ Reason string }

func (e *UndoConflict) Error() string { return e.Reason }
