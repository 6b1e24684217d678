// Package jsonl frames newline-delimited JSON: a bounded line reader that
// survives oversized lines, and a writer queue bounded by frames and bytes
// that gives up on a client that stops reading.
package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrLineTooLong reports a line longer than the reader's limit. The line was
// discarded; the next call reads the line after it.
var ErrLineTooLong = errors.New("line too long")

// Reader reads lines of at most Max bytes (newline and a trailing CR
// excluded) without ever buffering more than that.
type Reader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// A Reader's memory between lines. Every protocol connection has one, so
// a daemon with 200 clients holds 200: the read buffer is small (a longer
// line is gathered from several reads into buf), and a buffer that grew
// past keepLineBytes for one large line (a prompt with images) is dropped
// before the next instead of being kept for the connection's life.
const (
	readBufferBytes = 16 << 10
	keepLineBytes   = 64 << 10
)

// NewReader returns a Reader over r with the given line limit.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, readBufferBytes), max: max}
}

// Next returns the next non-empty line. The slice is valid until the next
// call. An oversized line yields an error
// wrapping ErrLineTooLong (with its size so far); reading can continue. At
// the end of input it returns io.EOF; a final line without newline is
// returned first.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

func (r *Reader) line() ([]byte, error) {
	if cap(r.buf) > keepLineBytes {
		r.buf = nil
	}
	r.buf = r.buf[:0]
	over := 0
	for {
		frag, err := r.r.ReadSlice('\n')
		if over == 0 && len(r.buf)+len(frag) <= r.max+2 { // room for CR LF
			r.buf = append(r.buf, frag...)
		} else {
			over += len(r.buf) + len(frag)
			r.buf = r.buf[:0]
		}
		switch {
		case err == nil:
			return r.finish(over)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if over == 0 && len(r.buf) == 0 {
				return nil, io.EOF
			}
			return r.finish(over)
		default:
			return nil, err
		}
	}
}

func (r *Reader) finish(over int) ([]byte, error) {
	line := bytes.TrimSuffix(r.buf, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if over > 0 || len(line) > r.max {
		n := over
		if n == 0 {
			n = len(line)
		}
		return nil, fmt.Errorf("%w: %d bytes or more, limit %d", ErrLineTooLong, n, r.max)
	}
	return line, nil
}
