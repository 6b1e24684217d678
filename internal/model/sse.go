package model

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

var (
	errEventTooLarge    = errors.New("sse event too large")
	errResponseTooLarge = errors.New("response too large")
)

// limitReader counts body bytes and fails once more than limit arrive; the
// bytes past the limit are never handed on.
type limitReader struct {
	r     io.Reader
	n     int
	limit int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, errResponseTooLarge
	}
	if room := l.limit - l.n + 1; len(p) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.n += n
	if l.n > l.limit {
		return 0, errResponseTooLarge
	}
	return n, err
}

// sseReader is a minimal text/event-stream decoder (event and data fields)
// that never buffers more than the caller's bound of one event.
type sseReader struct {
	r    *bufio.Reader
	data bytes.Buffer
	// name is the last event name, reused while it repeats.
	name string
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// next returns the next dispatched event, failing with errEventTooLarge
// once the event's lines exceed maxEvent bytes. At the end of the stream it
// returns io.EOF; a trailing event without its blank line is dropped.
// data is valid until the next call.
func (s *sseReader) next(maxEvent int) (name string, data []byte, err error) {
	s.data.Reset()
	size, hasData := 0, false
	for {
		line, err := s.readLine(maxEvent - size)
		if err != nil {
			return "", nil, err
		}
		size += len(line) + 1
		if len(line) == 0 {
			if !hasData && name == "" {
				size = 0
				continue
			}
			return name, s.data.Bytes(), nil
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			if string(value) != s.name {
				s.name = string(value)
			}
			name = s.name
		case "data":
			if hasData {
				s.data.WriteByte('\n')
			}
			s.data.Write(value)
			hasData = true
		}
	}
}

// readLine reads one line without its terminator, failing when it would
// exceed room bytes.
func (s *sseReader) readLine(room int) ([]byte, error) {
	var line []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		if len(line)+len(frag) > room+2 {
			return nil, errEventTooLarge
		}
		if err == bufio.ErrBufferFull {
			line = append(line, frag...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if line == nil {
			line = frag
		} else {
			line = append(line, frag...)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}
