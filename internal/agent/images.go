package agent

import (
	"slices"
	"strconv"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/model"
)

// The wires are stateless, so every model request sends the history's
// images again. Only the newest are sent: walking back from the newest
// message, images while there are at most maxSentImages of them and
// their bytes add up to at most imagefile.MaxTotalBytes. An older image
// is left out of the request with a note in its message's text, and its
// bytes are let go (the session keeps its path and hash), so neither a
// request nor the memory of a long session grows with every screenshot.

// maxSentImages is the most images one request carries.
const maxSentImages = 20

// sendWindow counts the images taken so far, newest first.
type sendWindow struct {
	n     int
	bytes int64
}

func (w *sendWindow) fits(size int64) bool {
	return w.n < maxSentImages && w.bytes+size <= imagefile.MaxTotalBytes
}

func (w *sendWindow) take(size int64) { w.n++; w.bytes += size }

// LeftOutImageNote stands in a request for an image older than what a
// request resends.
func LeftOutImageNote(path string) string {
	return "[image " + path + " left out: only the newest " + strconv.Itoa(maxSentImages) + " images (20 MiB) are sent again]"
}

// requestImages lets go of the bytes of the history's images outside the
// send window and returns msgs for the request: a message whose images
// were left out is a copy with the sendable images and a note for each
// other one. The history's own messages keep their text.
func (s *Session) requestImages(msgs []model.Message) []model.Message {
	if s.hist.sums.images == 0 {
		return msgs // nothing to let go of or leave out
	}
	var w sendWindow
	for i := len(s.hist.msgs) - 1; i >= 0; i-- {
		ims := s.hist.msgs[i].Images
		for j := range ims {
			if len(ims[j].Data) > 0 && w.fits(ims[j].Size) {
				w.take(ims[j].Size)
			} else {
				ims[j].Data = nil
			}
		}
	}
	out := msgs
	for i, m := range msgs {
		var keep []model.Image
		var notes []string
		for _, im := range m.Images {
			if len(im.Data) > 0 {
				keep = append(keep, im)
			} else {
				notes = append(notes, LeftOutImageNote(im.Path))
			}
		}
		if len(notes) == 0 {
			continue
		}
		if &out[0] == &msgs[0] {
			out = slices.Clone(msgs)
		}
		m.Images = keep
		m.Content = withNotes(m.Content, notes)
		out[i] = m
	}
	return out
}
