// Package client is the Go client of SCV's protocol (runtime.md §4): it dials
// the daemon socket (or wraps any reader/writer pair, such as a stdio child),
// writes client messages as JSON lines, reads bounded server frames and
// correlates answers with the requests that wait for them. The TUI and
// scv exec use it; it imports only internal/proto and internal/jsonl.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/scv-agent/scv/internal/jsonl"
	"github.com/scv-agent/scv/internal/proto"
)

// eventBuffer is how many unclaimed events wait for the Events reader before
// the read loop stops reading (the server then sees a slow client).
const eventBuffer = 256

// ErrClosed is returned by calls on a closed connection.
var ErrClosed = errors.New("connection closed")

// NoDaemonError says that nothing listens on the instance socket.
type NoDaemonError struct {
	Socket string
	Err    error
}

func (e *NoDaemonError) Error() string {
	return fmt.Sprintf("no SCV daemon is listening on %s; start one with `scv run` (foreground) or `scv start` (background)", e.Socket)
}

func (e *NoDaemonError) Unwrap() error { return e.Err }

// RequestError is an `error` event answering a request.
type RequestError struct {
	Code    string
	Message string
	Fatal   bool
}

func (e *RequestError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Conn is one protocol connection. Its methods are safe for concurrent use.
type Conn struct {
	r      io.Reader
	w      io.Writer
	closer []io.Closer

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	nextID  uint64
	waiters map[string]chan proto.Event
	err     error // why reading stopped

	events    chan proto.Event
	done      chan struct{}
	closeOnce sync.Once
	readDone  chan struct{}
}

// Dial connects to the daemon socket. When nothing listens there the error
// is a *NoDaemonError naming the socket and how to start a daemon.
func Dial(ctx context.Context, socketPath string) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dial %s: %w", socketPath, err)
		}
		return nil, &NoDaemonError{Socket: socketPath, Err: err}
	}
	return NewConn(c, c), nil
}

// NewConn speaks the protocol over r and w (a socket or a child's stdio).
// Close closes r and w when they are io.Closers; a reader that is not one
// must return from Read on its own for the read goroutine to end.
func NewConn(r io.Reader, w io.Writer) *Conn {
	c := &Conn{
		r:        r,
		w:        w,
		waiters:  map[string]chan proto.Event{},
		events:   make(chan proto.Event, eventBuffer),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
	}
	if rc, ok := r.(io.Closer); ok {
		c.closer = append(c.closer, rc)
	}
	if wc, ok := w.(io.Closer); ok && any(w) != any(r) {
		c.closer = append(c.closer, wc)
	}
	go c.readLoop()
	return c
}

// Events are the server events no waiting call claimed, in arrival order.
// The channel is closed when the connection ends; Err then says why.
func (c *Conn) Events() <-chan proto.Event { return c.events }

// Err is why the connection ended (io.EOF when the server closed it), or
// nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection and waits for the read goroutine.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		for _, cl := range c.closer {
			if e := cl.Close(); e != nil && err == nil {
				err = e
			}
		}
	})
	<-c.readDone
	return err
}

// Send writes one client message, assigning a request_id when its envelope
// has none. msg is a proto message struct (or pointer to one) with an
// embedded proto.Envelope; other values are sent as they marshal.
func (c *Conn) Send(msg any) error {
	_, err := c.send(pointerTo(msg))
	return err
}

func (c *Conn) send(msg any) (string, error) {
	select {
	case <-c.done:
		return "", ErrClosed
	default:
	}
	id := ""
	if env := envelopeOf(msg); env != nil {
		if env.RequestID == "" {
			env.RequestID = c.newID()
		}
		id = env.RequestID
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return "", fmt.Errorf("encode message: %w", err)
	}
	if len(b) > proto.MaxClientFrameBytes {
		return "", fmt.Errorf("message of %d bytes exceeds the %d-byte frame limit", len(b), proto.MaxClientFrameBytes)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return "", fmt.Errorf("write message: %w", err)
	}
	return id, nil
}

func (c *Conn) newID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return "c" + strconv.FormatUint(c.nextID, 10)
}

// envelopeOf finds the embedded Envelope of a proto message (by pointer, so
// an assigned request_id is visible to the caller).
func envelopeOf(msg any) *proto.Envelope {
	switch m := msg.(type) {
	case *proto.Envelope:
		return m
	case *proto.Initialize:
		return &m.Envelope
	case *proto.SessionStart:
		return &m.Envelope
	case *proto.TurnStart:
		return &m.Envelope
	case *proto.TurnCancel:
		return &m.Envelope
	case *proto.ApprovalResolve:
		return &m.Envelope
	case *proto.SessionRef:
		return &m.Envelope
	case *proto.ClawbotSettings:
		return &m.Envelope
	case *proto.ClawbotRef:
		return &m.Envelope
	}
	return nil
}

// pointerTo returns a pointer copy of a value message so Send can assign
// its request_id; pointers pass through.
func pointerTo(msg any) any {
	switch m := msg.(type) {
	case proto.Envelope:
		return &m
	case proto.Initialize:
		return &m
	case proto.SessionStart:
		return &m
	case proto.TurnStart:
		return &m
	case proto.TurnCancel:
		return &m
	case proto.ApprovalResolve:
		return &m
	case proto.SessionRef:
		return &m
	case proto.ClawbotSettings:
		return &m
	case proto.ClawbotRef:
		return &m
	}
	return msg
}

// Call sends msg and waits for the first event that echoes its request_id.
// An `error` answer is returned as a *RequestError.
func (c *Conn) Call(ctx context.Context, msg any) (proto.Event, error) {
	msg = pointerTo(msg)
	env := envelopeOf(msg)
	if env == nil {
		return proto.Event{}, fmt.Errorf("call: %T is not a protocol message", msg)
	}
	if env.RequestID == "" {
		env.RequestID = c.newID()
	}
	ch := make(chan proto.Event, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return proto.Event{}, fmt.Errorf("%s: %w", env.Type, err)
	}
	c.waiters[env.RequestID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, env.RequestID)
		c.mu.Unlock()
	}()
	if _, err := c.send(msg); err != nil {
		return proto.Event{}, err
	}
	select {
	case ev, ok := <-ch:
		if !ok {
			return proto.Event{}, fmt.Errorf("%s: connection ended before an answer: %w", env.Type, c.Err())
		}
		if ev.Type == proto.EventError {
			return ev, &RequestError{Code: ev.Code, Message: ev.Message, Fatal: ev.Fatal != nil && *ev.Fatal}
		}
		return ev, nil
	case <-ctx.Done():
		return proto.Event{}, ctx.Err()
	case <-c.done:
		return proto.Event{}, ErrClosed
	}
}

// Initialize opens the connection with the protocol handshake.
func (c *Conn) Initialize(ctx context.Context, name, version string) (proto.Event, error) {
	ev, err := c.Call(ctx, &proto.Initialize{
		Envelope:        proto.Envelope{Type: proto.TypeInitialize},
		ProtocolVersion: proto.Version,
		Client:          proto.Peer{Name: name, Version: version},
	})
	if err != nil {
		return ev, fmt.Errorf("initialize: %w", err)
	}
	if ev.Type != proto.EventInitialized {
		return ev, fmt.Errorf("initialize: unexpected answer %q", ev.Type)
	}
	return ev, nil
}

// StartSession opens a session and returns its session.started event.
func (c *Conn) StartSession(ctx context.Context, s proto.SessionStart) (proto.Event, error) {
	s.Type = proto.TypeSessionStart
	ev, err := c.Call(ctx, &s)
	if err != nil {
		return ev, fmt.Errorf("start session: %w", err)
	}
	if ev.Type != proto.EventSessionStarted {
		return ev, fmt.Errorf("start session: unexpected answer %q", ev.Type)
	}
	return ev, nil
}

// readLoop decodes server frames until EOF, an error or Close.
func (c *Conn) readLoop() {
	defer close(c.readDone)
	lr := jsonl.NewReader(c.r, proto.MaxServerFrameBytes)
	var err error
	for {
		var line []byte
		line, err = lr.Next()
		if errors.Is(err, jsonl.ErrLineTooLong) {
			// The line was skipped whole; tell the reader and go on.
			if !c.dispatch(proto.Event{Type: proto.EventError, Code: proto.ErrInvalidRequest, Message: "server frame dropped: " + err.Error()}) {
				err = ErrClosed
				break
			}
			continue
		}
		if err != nil {
			break
		}
		var ev proto.Event
		if e := json.Unmarshal(line, &ev); e != nil {
			err = fmt.Errorf("decode server frame: %w", e)
			break
		}
		if !c.dispatch(ev) {
			err = ErrClosed
			break
		}
	}
	select {
	case <-c.done:
		err = ErrClosed
	default:
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.waiters {
		close(ch)
		delete(c.waiters, id)
	}
	c.mu.Unlock()
	close(c.events)
}

// dispatch hands ev to its waiter or to Events; false after Close.
func (c *Conn) dispatch(ev proto.Event) bool {
	if ev.RequestID != "" {
		c.mu.Lock()
		ch, ok := c.waiters[ev.RequestID]
		if ok {
			delete(c.waiters, ev.RequestID)
		}
		c.mu.Unlock()
		if ok {
			ch <- ev // buffered, one answer per waiter
			return true
		}
	}
	select {
	case c.events <- ev:
		return true
	case <-c.done:
		return false
	}
}
