package proc

import (
	"fmt"
	"sync"

	"github.com/scv-agent/scv/internal/textcut"
)

// Capture keeps a bounded head and tail of everything written to it, so a
// command may print any amount while memory stays O(limit). It is safe for
// concurrent writers.
//
// String returns the output verbatim when it fits in the limit; otherwise it
// returns the head, a marker line naming how many bytes were cut, and the
// tail, together at most limit bytes whenever the limit leaves room for the
// marker, and cut on UTF-8 character boundaries.
type Capture struct {
	mu      sync.Mutex
	limit   int
	headCap int
	head    []byte
	tail    ring
	total   int64
}

// NewCapture returns a Capture showing at most limit bytes (values below zero
// count as zero).
func NewCapture(limit int) *Capture {
	limit = max(limit, 0)
	headCap := limit / 2
	return &Capture{limit: limit, headCap: headCap, tail: ring{size: limit - headCap}}
}

// Write records p. It never fails and always reports len(p).
func (c *Capture) Write(p []byte) (int, error) {
	n := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(n)
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		if c.head == nil {
			c.head = make([]byte, 0, min(c.headCap, max(k, 512)))
		}
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail.write(p)
	return n, nil
}

// Total is the number of bytes written so far.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Truncated says String leaves something out.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.head)+c.tail.len())
}

// Parts returns what the capture kept: the head, the tail and the total
// written. When head and tail hold every byte (total == len(head) +
// len(tail)) they are the whole output in order; otherwise the bytes
// between them were dropped. A caller that sizes the output itself (for an
// encoding that grows the text) renders from these instead of String.
func (c *Capture) Parts() (head, tail []byte, total int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.head...), c.tail.bytes(), c.total
}

// Cut is the number of written bytes String leaves out (0 when nothing is
// cut). It counts bytes dropped to respect the limit, to make room for the
// marker and to keep characters whole.
func (c *Capture) Cut() int64 {
	_, cut := c.render()
	return cut
}

// String is the captured output as described on Capture.
func (c *Capture) String() string {
	s, _ := c.render()
	return s
}

func (c *Capture) render() (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail.bytes()
	if c.total == int64(len(c.head)+len(tail)) {
		return string(c.head) + string(tail), 0
	}
	// Reserve room for the longest marker this capture could need; the real
	// one is never longer, so the result stays within the limit.
	budget := c.limit - len(marker(c.total))
	if budget < 2 {
		h := textcut.TrimEnd(c.head[:min(len(c.head), c.limit)])
		return string(h), c.total - int64(len(h))
	}
	hn := min(budget/2, len(c.head))
	tn := min(budget-hn, len(tail))
	h := textcut.TrimEnd(c.head[:hn])
	t := textcut.TrimStart(tail[len(tail)-tn:])
	cut := c.total - int64(len(h)+len(t))
	return string(h) + marker(cut) + string(t), cut
}

func marker(cut int64) string { return fmt.Sprintf("\n[… %d bytes cut …]\n", cut) }

// Tail keeps the last n bytes written to it (for stderr tails). It is safe
// for concurrent writers.
type Tail struct {
	mu    sync.Mutex
	r     ring
	total int64
}

// NewTail returns a Tail keeping the last n bytes.
func NewTail(n int) *Tail { return &Tail{r: ring{size: max(n, 0)}} }

// Write records p. It never fails and always reports len(p).
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.r.write(p)
	return len(p), nil
}

// String is the kept tail, starting on a UTF-8 character boundary.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.r.bytes()
	if t.total > int64(len(b)) {
		b = textcut.TrimStart(b)
	}
	return string(b)
}

// Truncated says earlier bytes were dropped.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(t.r.len())
}

// Total is the number of bytes written so far.
func (t *Tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// ring is a fixed-size byte ring holding the last size bytes written. The
// buffer is allocated on first use so an unused ring costs nothing.
type ring struct {
	size int
	buf  []byte
	pos  int // next write position
	n    int // valid bytes
}

func (r *ring) len() int { return r.n }

func (r *ring) write(p []byte) {
	if r.size == 0 || len(p) == 0 {
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, r.size)
	}
	if len(p) >= r.size {
		copy(r.buf, p[len(p)-r.size:])
		r.pos, r.n = 0, r.size
		return
	}
	k := copy(r.buf[r.pos:], p)
	copy(r.buf, p[k:])
	r.pos = (r.pos + len(p)) % r.size
	r.n = min(r.n+len(p), r.size)
}

// bytes returns the kept bytes in order (a fresh slice).
func (r *ring) bytes() []byte {
	out := make([]byte, 0, r.n)
	if r.n < r.size {
		return append(out, r.buf[r.pos-r.n:r.pos]...)
	}
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}
