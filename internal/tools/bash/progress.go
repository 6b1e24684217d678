package bash

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/proc"
)

const (
	// progressEvery is the least time between two progress lines
	// (the protocol allows one per 500 ms per call; docs/protocol.md).
	progressEvery = 500 * time.Millisecond
	// progressTail is how much recent output is searched for the last line.
	progressTail = 1024
	// progressMax bounds one progress line. The server redacts key values
	// and only then cuts the line to the protocol's 200 bytes, so a key is
	// never cut in two here, with one part out of sight of the redaction.
	progressMax = progressTail
)

// progressWriter passes output on to w and, at most every progressEvery,
// reports the last line of output seen so far.
type progressWriter struct {
	w    io.Writer
	tail *proc.Tail
	send func(string)

	mu   sync.Mutex
	last time.Time
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	_, _ = p.tail.Write(b)
	p.mu.Lock()
	due := time.Since(p.last) >= progressEvery
	if due {
		p.last = time.Now()
	}
	p.mu.Unlock()
	if due {
		if line := lastLine([]byte(p.tail.String())); line != "" {
			p.send(line)
		}
	}
	return n, err
}

// lastLine is the last non-blank line of b (a carriage return also ends a
// line, as progress bars use it), bounded to progressMax bytes of valid UTF-8.
func lastLine(b []byte) string {
	b = bytes.TrimRight(b, " \t\r\n")
	line := bytes.TrimSpace(b[bytes.LastIndexAny(b, "\r\n")+1:])
	return strings.ToValidUTF8(string(line[:min(len(line), progressMax)]), "")
}
