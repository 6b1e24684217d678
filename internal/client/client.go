// Package client is the Go client of SCV's protocol (docs/protocol.md): it
// dials the daemon socket (or wraps any reader/writer pair, such as a stdio
// child), writes client messages as JSON lines, reads bounded server frames,
// decodes each by its type, and correlates answers with the requests that
// wait for them. The TUI and
// scv exec use it; it imports only internal/proto and internal/jsonl.
package client

import (
	"context"
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
// has none (the caller sees it in msg).
func (c *Conn) Send(msg proto.Message) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if env := msg.Env(); env.RequestID == "" {
		env.RequestID = c.newID()
	}
	b, err := proto.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if len(b) > proto.MaxClientFrameBytes {
		return fmt.Errorf("message of %d bytes exceeds the %d-byte frame limit", len(b), proto.MaxClientFrameBytes)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

func (c *Conn) newID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return "c" + strconv.FormatUint(c.nextID, 10)
}

// Call sends msg and waits for the first event that echoes its request_id.
// An `error` answer is returned as a *RequestError (with the event).
func (c *Conn) Call(ctx context.Context, msg proto.Message) (proto.Event, error) {
	env := msg.Env()
	if env.RequestID == "" {
		env.RequestID = c.newID()
	}
	typ := msg.MessageType()
	ch := make(chan proto.Event, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	c.waiters[env.RequestID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, env.RequestID)
		c.mu.Unlock()
	}()
	if err := c.Send(msg); err != nil {
		return nil, err
	}
	select {
	case ev, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: connection ended before an answer: %w", typ, c.Err())
		}
		if e, isErr := ev.(*proto.Error); isErr {
			return ev, &RequestError{Code: e.Code, Message: e.Message, Fatal: e.Fatal}
		}
		return ev, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, ErrClosed
	}
}

// CallFor is Call for a request whose answer has the event type T: another
// answer is an error naming both types.
func CallFor[T proto.Event](ctx context.Context, c *Conn, msg proto.Message) (T, error) {
	var zero T
	ev, err := c.Call(ctx, msg)
	if err != nil {
		return zero, err
	}
	t, ok := ev.(T)
	if !ok {
		return zero, fmt.Errorf("%s: unexpected answer %q", msg.MessageType(), ev.EventType())
	}
	return t, nil
}

// Initialize opens the connection with the protocol handshake.
func (c *Conn) Initialize(ctx context.Context, name, version string) (*proto.Initialized, error) {
	ev, err := CallFor[*proto.Initialized](ctx, c, &proto.Initialize{
		ProtocolVersion: proto.Version,
		Client:          proto.Peer{Name: name, Version: version},
	})
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return ev, nil
}

// StartSession opens a session and returns its session.started event.
func (c *Conn) StartSession(ctx context.Context, s proto.SessionStart) (*proto.SessionStarted, error) {
	ev, err := CallFor[*proto.SessionStarted](ctx, c, &s)
	if err != nil {
		return nil, fmt.Errorf("start session: %w", err)
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
			if !c.dispatch(&proto.Error{Header: proto.Header{Type: proto.EventError}, Code: proto.ErrInvalidRequest, Message: "server frame dropped: " + err.Error()}) {
				err = ErrClosed
				break
			}
			continue
		}
		if err != nil {
			break
		}
		ev, e := proto.DecodeEvent(line)
		if e != nil {
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
	if id := ev.Head().RequestID; id != "" {
		c.mu.Lock()
		ch, ok := c.waiters[id]
		if ok {
			delete(c.waiters, id)
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
