package model

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
)

// imageSlots keeps a request's image bytes out of encoding/json: while the
// body is marshalled each image is a short placeholder string, and splice
// then writes the base64 text in its place, into one buffer of the
// body's final size. encoding/json would check every byte of the base64
// for escaping and grow its buffer by doubling (docs/benchmarks/model.md).
type imageSlots struct {
	nonce string
	parts []slotPart
}

type slotPart struct {
	prefix string // "data:<type>;base64," for a data URL, "" for bare base64
	data   []byte
}

func newImageSlots() *imageSlots {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &imageSlots{nonce: hex.EncodeToString(b[:])}
}

// dataURL stands for im as a data: URL (the OpenAI wires).
func (s *imageSlots) dataURL(im Image) string {
	return s.slot("data:"+im.MediaType+";base64,", im.Data)
}

// base64 stands for im's bytes in base64 (Anthropic).
func (s *imageSlots) base64(im Image) string { return s.slot("", im.Data) }

func (s *imageSlots) slot(prefix string, data []byte) string {
	s.parts = append(s.parts, slotPart{prefix: prefix, data: data})
	return s.mark() + strconv.Itoa(len(s.parts)-1) + "-"
}

// mark starts every placeholder: a random nonce per request, so no text
// of the conversation can be taken for one.
func (s *imageSlots) mark() string { return "scv-image-" + s.nonce + "-" }

// splice replaces each placeholder of body by its image's text. The
// placeholders are inside JSON strings and the base64 alphabet needs no
// escaping, so the result is the JSON encoding/json would have written.
func (s *imageSlots) splice(body []byte) ([]byte, error) {
	if len(s.parts) == 0 {
		return body, nil
	}
	size := len(body)
	for _, p := range s.parts {
		size += len(p.prefix) + base64.StdEncoding.EncodedLen(len(p.data))
	}
	out := make([]byte, 0, size)
	mark := []byte(s.mark())
	rest, done := body, 0
	for {
		i := bytes.Index(rest, mark)
		if i < 0 {
			break
		}
		after := rest[i+len(mark):]
		end := bytes.IndexByte(after, '-')
		n, err := strconv.Atoi(string(after[:max(end, 0)]))
		if end < 0 || err != nil || n < 0 || n >= len(s.parts) {
			return nil, fmt.Errorf("encode request: a malformed image placeholder")
		}
		p := s.parts[n]
		out = append(out, rest[:i]...)
		out = append(out, p.prefix...)
		out = base64.StdEncoding.AppendEncode(out, p.data)
		rest = after[end+1:]
		done++
	}
	if done != len(s.parts) {
		return nil, fmt.Errorf("encode request: %d of %d images placed", done, len(s.parts))
	}
	return append(out, rest...), nil
}
