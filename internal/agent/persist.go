package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// The canonical history leaves and re-enters a session as JSON messages (a
// session store keeps them): each is the model message plus "failed": true
// for a tool message whose call failed. The history only grows at the end
// and loses whole groups at the front, so a turn's change is the messages
// appended during it and the number dropped from the front.

// storedMessage is one history message as JSON.
type storedMessage struct {
	model.Message
	Failed bool `json:"failed,omitempty"`
}

// Mark is the history as it stood at one moment (before a turn): what
// HistoryChange compares with and Rewind returns to.
type Mark struct {
	snap  snapshot
	added int64
}

// Mark captures the history now. It is cheap: the history is never
// rewritten in place below its current length.
func (s *Session) Mark() Mark { return Mark{snap: s.hist.snapshot(), added: s.hist.added} }

// Rewind returns the history to m (a turn that could not be saved must not
// change it).
func (s *Session) Rewind(m Mark) {
	s.hist.restore(m.snap)
	s.hist.added = m.added
}

// TurnEnd is what a turn leaves for its record, handed over with its
// terminal event (RunTurnAttached's ended) so the recorder takes nothing
// back out of the session: the history's change, the files the turn
// wrote, and the history before it.
type TurnEnd struct {
	// Appended and Drop are how the turn changed the history, as
	// HistoryChange gives it: (before ++ Appended)[Drop:]. A failed turn
	// leaves the history as it was and has neither.
	Appended []json.RawMessage
	Drop     int
	// HistoryErr says the change could not be encoded: the turn cannot
	// be recorded with its history.
	HistoryErr error
	// Files are the workspace files the turn wrote, in the order first
	// written.
	Files []filechange.Change
	// Before is the history before the turn: Rewind(Before) takes the
	// turn's change back when its record is refused.
	Before Mark
}

// Ended receives a turn's terminal event with what the turn left.
type Ended func(ev proto.TurnEvent, end TurnEnd)

// turnEnd is the TurnEnd of the turn that began at before and ends with e.
func (s *Session) turnEnd(before Mark, e proto.TurnEvent) TurnEnd {
	end := TurnEnd{Files: s.changes, Before: before}
	if _, failed := e.(*proto.TurnFailed); !failed {
		end.Appended, end.Drop, end.HistoryErr = s.HistoryChange(before)
	}
	return end
}

// HistoryChange returns how the history changed since m as (old ++
// appended)[drop:]: the messages appended since m that are still present
// (all of them unless trimming reached them too) and how many messages to
// drop from the front. Call it with no turn running.
func (s *Session) HistoryChange(m Mark) (appended []json.RawMessage, drop int, err error) {
	n := len(s.hist.msgs)
	k := min(int(s.hist.added-m.added), n)
	if k < 0 {
		return nil, 0, fmt.Errorf("history change: the mark is newer than the history")
	}
	appended, err = encodeMessages(s.hist.msgs[n-k:], s.hist.meta[n-k:])
	if err != nil {
		return nil, 0, err
	}
	drop = len(m.snap.msgs) + k - n
	if drop < 0 {
		return nil, 0, fmt.Errorf("history change: %d messages now, %d before and %d added", n, len(m.snap.msgs), k)
	}
	return appended, drop, nil
}

// History returns the whole canonical history as JSON messages.
func (s *Session) History() ([]json.RawMessage, error) {
	return encodeMessages(s.hist.msgs, s.hist.meta)
}

func encodeMessages(msgs []model.Message, metas []meta) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(storedMessage{Message: m, Failed: !metas[i].ok})
		if err != nil {
			return nil, fmt.Errorf("encode history message %d: %w", i, err)
		}
		out[i] = b
	}
	return out, nil
}

// LoadHistory replaces the history with msgs (a resumed session's). Every
// message must be a JSON object with a known role.
func (s *Session) LoadHistory(msgs []json.RawMessage) error {
	stored := make([]storedMessage, len(msgs))
	for i, raw := range msgs {
		m := &stored[i]
		if err := json.Unmarshal(raw, m); err != nil {
			return fmt.Errorf("history message %d: %w", i, err)
		}
		switch m.Role {
		case model.User, model.Assistant, model.ToolRole:
		default:
			return fmt.Errorf("history message %d has role %q (want user, assistant or tool)", i, m.Role)
		}
	}
	// Only the images a request would send are read again, newest first
	// (sendWindow); older ones stay references and are left out.
	var w sendWindow
	for i := len(stored) - 1; i >= 0; i-- {
		if len(stored[i].Images) > 0 {
			stored[i].Message = hydrateImages(stored[i].Message, &w)
		}
	}
	var h history
	for _, m := range stored {
		h.append(m.Message, !m.Failed)
	}
	h.turnStart = len(h.msgs)
	s.hist = h
	s.lastCut = 0
	return nil
}

// hydrateImages gives a stored user message's images their bytes again:
// the history keeps an image by path and hash only, so each file is read
// anew and must still hash as it did when it was attached. An image whose
// file is gone, or holds something else now, leaves the message and a
// note takes its place at the end of the text, so the model knows an
// image was there and why it no longer is.
func hydrateImages(m model.Message, w *sendWindow) model.Message {
	kept := make([]model.Image, 0, len(m.Images))
	var notes []string
	for _, im := range m.Images {
		if !w.fits(im.Size) {
			kept = append(kept, im) // never sent again: not read
			continue
		}
		f, err := imagefile.Read(im.Path)
		switch {
		case err == nil && f.SHA256 == im.SHA256:
			im.Data, im.MediaType = f.Data, f.MediaType
			kept = append(kept, im)
			w.take(im.Size)
		case err != nil && isMissing(im.Path):
			notes = append(notes, MissingImageNote(im.Path))
		default:
			notes = append(notes, ChangedImageNote(im.Path))
		}
	}
	m.Images = kept
	if len(kept) == 0 {
		m.Images = nil
	}
	m.Content = withNotes(m.Content, notes)
	return m
}

// withNotes is text followed by the notes, a line each.
func withNotes(text string, notes []string) string {
	if len(notes) == 0 {
		return text
	}
	if text == "" {
		return strings.Join(notes, "\n")
	}
	return text + "\n" + strings.Join(notes, "\n")
}

func isMissing(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// ChangedImageNote replaces, on resume, an image whose file now holds
// other bytes than it did when it was attached.
func ChangedImageNote(path string) string {
	return "[image " + path + " changed since it was attached]"
}

// MissingImageNote replaces, on resume, an image whose file is gone.
func MissingImageNote(path string) string {
	return "[image " + path + " is missing: it was attached, but the file is gone]"
}
