package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/tool"
)

// noteChange merges one write of the running turn into the turn's
// changes: the first write of a path keeps the content before the turn,
// later ones only update what the turn left.
func (s *Session) noteChange(c filechange.Change) {
	kept := 0
	for i := range s.changes {
		if s.changes[i].Path == c.Path {
			s.changes[i].After = c.After
			return
		}
		kept += len(s.changes[i].Before)
	}
	if kept+len(c.Before) > MaxTurnUndoBytes {
		c.Before, c.Unkept = nil, fmt.Sprintf("the turn's earlier file contents already took the %d bytes undo keeps per turn", MaxTurnUndoBytes)
	}
	s.changes = append(s.changes, c)
}

// MaxTurnUndoBytes bounds the earlier file content kept for one turn's
// undo; files past it are recorded as not undoable.
const MaxTurnUndoBytes = 16 << 20

// NoteUndo tells the model, in its history, that the user reverted the
// files of an earlier turn, so it does not assume its edits are still
// there. The note is a user message of its own before the next prompt;
// it returns the message as stored.
func (s *Session) NoteUndo(files []tool.FileUndo) (json.RawMessage, error) {
	var b strings.Builder
	b.WriteString("[scv] The user undid the file changes of the previous turn")
	for i, f := range files {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		verb := "restored "
		if f.Remove {
			verb = "removed "
		}
		b.WriteString(sep + verb + f.Path)
	}
	b.WriteString(". Those files are back to their content before that turn; changes made through bash or delegated agents were not reverted.")
	m := model.Message{Role: model.User, Content: b.String()}
	raw, err := json.Marshal(storedMessage{Message: m})
	if err != nil {
		return nil, fmt.Errorf("encode undo note: %w", err)
	}
	s.hist.append(m, true)
	s.hist.turnStart = len(s.hist.msgs)
	return raw, nil
}
