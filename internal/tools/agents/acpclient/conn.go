// Package acpclient is the client side of the Agent Client Protocol (v1)
// that SCV speaks to a delegated agent's ACP adapter (claude-agent-acp,
// codex-acp, pi-acp) over the adapter's stdin and stdout: JSON-RPC 2.0, one
// object per line. SCV offers no file system and no terminal: the agent's
// fs/* and terminal/* requests are answered "method not found"; its
// permission requests go to the Handler, its session updates too.
package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC error codes.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// MaxLineBytes bounds one message from the agent.
const MaxLineBytes = 16 << 20

// RPCError is an error response.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// ErrClosed is returned by calls on a connection whose agent went away.
var ErrClosed = errors.New("the ACP agent closed its connection")

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// Handler receives what the agent sends on its own.
type Handler struct {
	// Update receives every session/update notification.
	Update func(sessionID string, u Update)
	// Permission answers a session/request_permission: the chosen
	// option's id, or "" for a cancelled request. ctx ends when the
	// connection closes.
	Permission func(ctx context.Context, r PermissionRequest) string
}

// Conn is one JSON-RPC connection to an agent.
type Conn struct {
	h Handler

	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan message
	err     error

	done   chan struct{}
	ctx    context.Context // ends when the read loop ends
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New starts reading r; the connection lives until r ends (the agent
// exits or its stdout is closed). Wait returns once every handler that
// was started has returned.
func New(r io.Reader, w io.Writer, h Handler) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{h: h, w: w, pending: map[string]chan message{}, done: make(chan struct{}), ctx: ctx, cancel: cancel}
	c.wg.Add(1)
	go c.read(r)
	return c
}

// Done is closed when the agent's output ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Wait waits for the read loop and every handler to end.
func (c *Conn) Wait() { c.wg.Wait() }

func (c *Conn) read(r io.Reader) {
	defer c.wg.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			continue // not a protocol line: ignored
		}
		c.dispatch(m)
	}
	err := sc.Err()
	if err == nil {
		err = ErrClosed
	} else {
		err = fmt.Errorf("read from the ACP agent: %w", err)
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.cancel()
	close(c.done)
}

func (c *Conn) dispatch(m message) {
	switch {
	case m.Method == "" && len(m.ID) > 0:
		c.mu.Lock()
		ch, ok := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ok {
			ch <- m
		}
	case m.Method != "" && len(m.ID) == 0:
		c.notification(m)
	case m.Method != "":
		c.request(m)
	}
}

func (c *Conn) notification(m message) {
	if m.Method != "session/update" || c.h.Update == nil {
		return
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Update    Update `json:"update"`
	}
	if err := json.Unmarshal(m.Params, &p); err == nil {
		c.h.Update(p.SessionID, p.Update)
	}
}

// request answers one of the agent's requests: a permission request in
// its own goroutine (it waits for a person), anything else at once with
// "method not found".
func (c *Conn) request(m message) {
	if m.Method != "session/request_permission" || c.h.Permission == nil {
		c.respond(m.ID, nil, &RPCError{Code: CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	var p PermissionRequest
	if err := json.Unmarshal(m.Params, &p); err != nil {
		c.respond(m.ID, nil, &RPCError{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()})
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		opt := c.h.Permission(c.ctx, p)
		out := map[string]any{"outcome": "cancelled"}
		if opt != "" {
			out = map[string]any{"outcome": "selected", "optionId": opt}
		}
		c.respond(m.ID, map[string]any{"outcome": out}, nil)
	}()
}

func (c *Conn) respond(id json.RawMessage, result any, e *RPCError) {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		m["error"] = e
	} else {
		m["result"] = result
	}
	_ = c.write(m)
}

func (c *Conn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(b)
	return err
}

// Call sends a request and waits for its response (or ctx, or the end
// of the connection); result may be nil.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": c.nextIDRaw(id), "method": method, "params": params}); err != nil {
		c.forget(id)
		return fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return c.closedErr()
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decode the result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
}

func (c *Conn) nextIDRaw(id string) json.RawMessage { return json.RawMessage(id) }

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}
