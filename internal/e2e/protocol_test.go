package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rawConn is a protocol connection spoken line by line, without the client
// package, so malformed and oversized frames can be sent.
type rawConn struct {
	t *testing.T
	w io.Writer
	r *bufio.Reader
}

// reply is the part of a server event these tests compare.
type reply struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
	Code      string `json:"code,omitempty"`
	Fatal     *bool  `json:"fatal,omitempty"`
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// read is the next server line, decoded, within 30 s.
func (c *rawConn) read() (reply, map[string]any) {
	c.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() { l, err := c.r.ReadString('\n'); ch <- res{l, err} }()
	select {
	case x := <-ch:
		if x.err != nil {
			c.t.Fatalf("read server line: %v", x.err)
		}
		var rep reply
		var all map[string]any
		if err := json.Unmarshal([]byte(x.line), &rep); err != nil {
			c.t.Fatalf("server line is not JSON: %q", x.line)
		}
		_ = json.Unmarshal([]byte(x.line), &all)
		return rep, all
	case <-time.After(30 * time.Second):
		c.t.Fatal("no server line within 30 s")
	}
	return reply{}, nil
}

// eof waits up to 30 s for the server to close the connection.
func (c *rawConn) eof() {
	c.t.Helper()
	ch := make(chan error, 1)
	go func() { _, err := c.r.ReadString('\n'); ch <- err }()
	select {
	case err := <-ch:
		if err != io.EOF {
			c.t.Errorf("after a fatal error: read %v, want EOF", err)
		}
	case <-time.After(30 * time.Second):
		c.t.Fatal("connection still open 30 s after a fatal error")
	}
}

// openRaw opens a raw connection over stdio (a `scv server --stdio` child)
// or the daemon socket (in.startDaemon must have run).
func (in *instance) openRaw(transport string) *rawConn {
	in.t.Helper()
	if transport == "socket" {
		nc, err := net.Dial("unix", in.socket())
		if err != nil {
			in.t.Fatal(err)
		}
		in.t.Cleanup(func() { nc.Close() })
		return &rawConn{t: in.t, w: nc, r: bufio.NewReaderSize(nc, 1<<16)}
	}
	stdin, stdout, _ := in.stdioChild(in.env)
	return &rawConn{t: in.t, w: stdin, r: bufio.NewReaderSize(stdout, 1<<16)}
}

const initLine = `{"type":"initialize","request_id":"i","protocol_version":1,"client":{"name":"e2e","version":"1"}}`

// TestProtocolErrors sends the same conversation of good and bad frames
// over stdio and over the daemon socket: the same handler answers both, and
// no error but version_mismatch ends the connection.
func TestProtocolErrors(t *testing.T) {
	no, yes := false, true
	for _, transport := range []string{"stdio", "socket"} {
		t.Run(transport, func(t *testing.T) {
			in := newInstance(t, providerConfig("http://127.0.0.1:9"))
			if transport == "socket" {
				in.startDaemon(in.env)
			}
			statusReply := reply{Type: "daemon.status", RequestID: "r5"}
			if transport == "stdio" {
				statusReply = reply{Type: "error", RequestID: "r5", Code: "unsupported", Fatal: &no}
			}
			steps := []struct {
				send string
				want reply
			}{
				{`{"type":"session.start","request_id":"r1","cwd":"/"}`, reply{Type: "error", RequestID: "r1", Code: "not_initialized", Fatal: &no}},
				{`not json`, reply{Type: "error", Code: "invalid_json", Fatal: &no}},
				{initLine, reply{Type: "initialized", RequestID: "i"}},
				{`{"type":"bogus","request_id":"r3","extra":1}`, reply{Type: "error", RequestID: "r3", Code: "invalid_request", Fatal: &no}},
				{`{"type":"session.start","request_id":"r4","cwd":"` + strings.Repeat("x", 1<<20) + `"}`, reply{Type: "error", Code: "invalid_request", Fatal: &no}},
				{`{"type":"daemon.status","request_id":"r5"}`, statusReply},
				{`{"type":"session.start","request_id":"r6","cwd":"relative"}`, reply{Type: "error", RequestID: "r6", Code: "invalid_request", Fatal: &no}},
				{`{"type":"turn.start","request_id":"r7","session_id":"nope","prompt":"hi"}`, reply{Type: "error", RequestID: "r7", Code: "session_not_found", Fatal: &no}},
				{`{"type":"session.start","request_id":"r8","cwd":"` + in.ws + `","unknown_field":true}`, reply{Type: "session.started", RequestID: "r8"}},
			}
			c := in.openRaw(transport)
			for _, st := range steps {
				c.send(st.send)
				got, all := c.read()
				if diff := cmp.Diff(st.want, got); diff != "" {
					t.Errorf("answer to %.80s (-want +got):\n%s\nfull: %v", st.send, diff, all)
				}
				if got.Type == "initialized" {
					srv, _ := all["server"].(map[string]any)
					if all["protocol_version"] != float64(1) || srv["name"] != "scv" {
						t.Errorf("initialized = %v, want protocol_version 1 and server name scv", all)
					}
				}
			}

			c = in.openRaw(transport)
			c.send(strings.Replace(initLine, `"protocol_version":1`, `"protocol_version":2`, 1))
			got, _ := c.read()
			if diff := cmp.Diff(reply{Type: "error", RequestID: "i", Code: "version_mismatch", Fatal: &yes}, got); diff != "" {
				t.Errorf("version mismatch answer (-want +got):\n%s", diff)
			}
			c.eof()
			if transport == "socket" {
				in.connect() // the daemon outlives a connection's fatal error
			}
		})
	}
}
