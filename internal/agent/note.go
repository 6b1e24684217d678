package agent

import (
	"encoding/json"
	"fmt"

	"github.com/scv-agent/scv/internal/model"
)

// Note appends a system-authored message to the history outside any turn
// (a background job's report): a user message of its own, which the model
// reads with the next prompt. It returns the message as stored; Rewind to
// a Mark taken before undoes it. Call it with no turn running.
func (s *Session) Note(text string) (json.RawMessage, error) {
	raw, err := NoteMessage(text)
	if err != nil {
		return nil, err
	}
	s.hist.append(model.Message{Role: model.User, Content: text}, true)
	s.hist.turnStart = len(s.hist.msgs)
	return raw, nil
}

// NoteMessage is the stored form of Note's message, for a session that is
// not open (the store's history gains it; a resume loads it).
func NoteMessage(text string) (json.RawMessage, error) {
	raw, err := json.Marshal(storedMessage{Message: model.Message{Role: model.User, Content: text}})
	if err != nil {
		return nil, fmt.Errorf("encode note: %w", err)
	}
	return raw, nil
}
