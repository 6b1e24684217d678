package jsonl

import (
	"errors"
	"io"
	"sync"
	"time"
)

// ErrSlowClient is returned once the peer stopped reading for longer than
// the writer's patience; the writer is closed.
var ErrSlowClient = errors.New("client stopped reading")

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("writer closed")

// WriterOptions bound a Writer.
type WriterOptions struct {
	MaxFrames int           // queued frames (256)
	MaxBytes  int           // queued bytes (16 MiB)
	Patience  time.Duration // how long Send waits for room (3 s)
	// OnSlow is called once, from Send's goroutine, when the client is
	// declared slow.
	OnSlow func()
}

// Writer queues frames and writes them, one line each, from its own
// goroutine, so a slow reader never blocks the producer for long.
type Writer struct {
	w    io.Writer
	opts WriterOptions

	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	bytes  int
	closed bool
	err    error
	done   chan struct{}
}

// NewWriter starts a Writer over w. Close stops it.
func NewWriter(w io.Writer, opts WriterOptions) *Writer {
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = 256
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 16 << 20
	}
	if opts.Patience <= 0 {
		opts.Patience = 3 * time.Second
	}
	wr := &Writer{w: w, opts: opts, done: make(chan struct{})}
	wr.cond = sync.NewCond(&wr.mu)
	go wr.loop()
	return wr
}

// Send queues one frame (without its newline). It waits up to Patience for
// room; after that the client is slow: OnSlow runs, the writer closes and
// ErrSlowClient is returned.
func (w *Writer) Send(frame []byte) error {
	line := make([]byte, len(frame)+1)
	copy(line, frame)
	line[len(frame)] = '\n'

	w.mu.Lock()
	deadline := time.Now().Add(w.opts.Patience)
	var timer *time.Timer
	for !w.closed && w.err == nil && len(w.queue) > 0 &&
		(len(w.queue) >= w.opts.MaxFrames || w.bytes+len(line) > w.opts.MaxBytes) {
		if time.Now().After(deadline) {
			w.err = ErrSlowClient
			w.closed = true
			w.cond.Broadcast()
			w.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			if w.opts.OnSlow != nil {
				w.opts.OnSlow()
			}
			return ErrSlowClient
		}
		if timer == nil {
			timer = time.AfterFunc(w.opts.Patience, func() {
				w.mu.Lock()
				w.cond.Broadcast()
				w.mu.Unlock()
			})
		}
		w.cond.Wait()
	}
	if timer != nil {
		timer.Stop()
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.queue = append(w.queue, line)
	w.bytes += len(line)
	w.cond.Broadcast()
	w.mu.Unlock()
	return nil
}

func (w *Writer) loop() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.queue) == 0 || w.err != nil {
			w.mu.Unlock()
			return
		}
		line := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		w.mu.Unlock()

		_, err := w.w.Write(line)

		w.mu.Lock()
		w.bytes -= len(line)
		if err != nil && w.err == nil {
			w.err = err
			w.closed = true
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Close flushes what is queued (unless the writer already failed) and stops
// the goroutine. It waits at most Patience for the flush.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	select {
	case <-w.done:
	case <-time.After(w.opts.Patience):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(w.err, ErrSlowClient) {
		return w.err
	}
	return nil
}
