package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
)

// The JSON-RPC 2.0 layer: one JSON object per line in each direction,
// requests answered by id, notifications without one, and the agent's own
// requests to the client (permission requests) correlated with their
// responses.

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errInvalidParams(format string, args ...any) *rpcError {
	return &rpcError{Code: CodeInvalidParams, Message: "invalid params: " + fmt.Sprintf(format, args...)}
}

func errInternal(format string, args ...any) *rpcError {
	return &rpcError{Code: CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// inbound is one line read from the client: a request (ID and Method), a
// notification (Method only) or a response to one of the agent's requests
// (ID and Result or Error).
type inbound struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type outbound struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// response is outbound with its id always written (null for a line whose
// id could not be read).
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

var nullID = json.RawMessage("null")

// wire writes lines to the client, one at a time, and matches the
// client's responses to the agent's requests.
type wire struct {
	mu     sync.Mutex
	w      io.Writer
	broken error

	pmu     sync.Mutex
	nextID  int
	pending map[string]chan inbound
	// withdrawn are the requests the client was told to drop.
	withdrawn map[string]bool
}

func newWire(w io.Writer) *wire { return &wire{w: w, pending: map[string]chan inbound{}} }

func (c *wire) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if _, err := c.w.Write(b); err != nil {
		c.broken = fmt.Errorf("write to the client: %w", err)
		return c.broken
	}
	return nil
}

func (c *wire) respond(id json.RawMessage, result any, rerr *rpcError) error {
	if id == nil {
		id = nullID
	}
	if rerr != nil {
		return c.write(response{JSONRPC: "2.0", ID: id, Error: rerr})
	}
	if result == nil {
		result = empty{}
	}
	return c.write(response{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *wire) notify(method string, params any) error {
	return c.write(outbound{JSONRPC: "2.0", Method: method, Params: params})
}

// call sends a request to the client and waits for its response, ctx's
// end or the end of the client's input (closed); at either the client is
// told with $/cancel_request.
func (c *wire) call(ctx context.Context, closed <-chan struct{}, method string, params any) (json.RawMessage, error) {
	c.pmu.Lock()
	c.nextID++
	id := json.RawMessage(strconv.Itoa(c.nextID))
	ch := make(chan inbound, 1)
	c.pending[string(id)] = ch
	c.pmu.Unlock()
	defer func() {
		c.pmu.Lock()
		delete(c.pending, string(id))
		c.pmu.Unlock()
	}()
	if err := c.write(outbound{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case in := <-ch:
		if in.Error != nil {
			return nil, in.Error
		}
		return in.Result, nil
	case <-ctx.Done():
		c.withdraw(id)
		return nil, ctx.Err()
	case <-closed:
		// The client's input ended; it may still read what comes.
		c.withdraw(id)
		return nil, errors.New("the client closed the connection")
	}
}

// withdraw tells the client, once, that request id is no longer wanted.
func (c *wire) withdraw(id json.RawMessage) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.withdrawn[string(id)] {
		return
	}
	if c.withdrawn == nil {
		c.withdrawn = map[string]bool{}
	}
	c.withdrawn[string(id)] = true
	_ = c.notify(MethodCancelRequest, map[string]any{"requestId": id})
}

// withdrawAll withdraws every request still waiting for the client, in
// the order they were sent, before the caller goes on: at the end of
// input the withdrawals come before anything the cancelled turns send.
func (c *wire) withdrawAll() {
	c.pmu.Lock()
	ids := make([]int, 0, len(c.pending))
	for k := range c.pending {
		if n, err := strconv.Atoi(k); err == nil {
			ids = append(ids, n)
		}
	}
	c.pmu.Unlock()
	slices.Sort(ids)
	for _, n := range ids {
		c.withdraw(json.RawMessage(strconv.Itoa(n)))
	}
}

// answer hands a client's response to the request waiting for it; false
// when none waits (a late or unknown id).
func (c *wire) answer(in inbound) bool {
	c.pmu.Lock()
	ch, ok := c.pending[string(bytes.TrimSpace(in.ID))]
	if ok {
		delete(c.pending, string(bytes.TrimSpace(in.ID)))
	}
	c.pmu.Unlock()
	if ok {
		ch <- in
	}
	return ok
}

// decodeParams reads params into v (a struct of pointer fields, so a
// missing field is nil); a field of the wrong JSON type is an error naming
// it. Unknown fields are ignored.
func decodeParams(params json.RawMessage, v any) *rpcError {
	if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		params = []byte("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return errInvalidParams("params must be an object, not %s", te.Value)
			}
			return errInvalidParams("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errInvalidParams("%v", err)
	}
	return nil
}

// jsonKind names a Go kind as the JSON type it decodes.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "int", "int64", "uint16":
		return "an integer"
	}
	return k
}

// required says the params field name is missing.
func required(name string) *rpcError { return errInvalidParams("%s is required", name) }
