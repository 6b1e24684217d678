package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeServer answers each client line with reply(line) and returns when the
// connection ends.
func fakeServer(t *testing.T, c net.Conn, reply func(env map[string]any) []proto.Event) chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("server got invalid JSON %q: %v", sc.Text(), err)
				return
			}
			for _, ev := range reply(m) {
				b, err := proto.EncodeEvent(ev)
				if err != nil {
					t.Errorf("encode %s: %v", ev.EventType(), err)
					return
				}
				if _, err := c.Write(append(b, '\n')); err != nil {
					return
				}
			}
		}
	}()
	return done
}

// turnHead is the header of an event of turn t1 in session s1.
func turnHead(typ string, seq uint64) proto.TurnHeader {
	return proto.TurnHeader{SessionHeader: proto.SessionHeader{Header: proto.Header{Type: typ}, SessionID: "s1", Seq: seq}, TurnID: "t1"}
}

func handshake(m map[string]any) []proto.Event {
	id, _ := m["request_id"].(string)
	switch m["type"] {
	case proto.TypeInitialize:
		return []proto.Event{&proto.Initialized{Header: proto.Header{RequestID: id}, ProtocolVersion: proto.Version, Server: proto.Peer{Name: "scv", Version: "test"}}}
	case proto.TypeSessionStart:
		cwd, _ := m["cwd"].(string)
		model, _ := m["model"].(string)
		return []proto.Event{
			&proto.SessionStarted{Header: proto.Header{RequestID: id}, SessionID: "s1", Cwd: cwd, Model: model, ContextMaxTokens: 1000, Tools: []string{"bash"}},
		}
	case proto.TypeTurnStart:
		return []proto.Event{
			&proto.TurnStarted{TurnHeader: turnHead("", 1)},
			&proto.AssistantDelta{TurnHeader: turnHead("", 2), Content: "hi"},
		}
	case proto.TypeSessionClose:
		return []proto.Event{&proto.Error{Header: proto.Header{RequestID: id}, Code: proto.ErrSessionNotFound, Message: "no such session"}}
	}
	return nil
}

func TestHandshakeSessionAndEvents(t *testing.T) {
	cl, sv := net.Pipe()
	done := fakeServer(t, sv, handshake)
	c := client.NewConn(cl, cl)
	ctx := t.Context()

	ev, err := c.Initialize(ctx, "test", "v0")
	if err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	if ev.Server.Name != "scv" {
		t.Errorf("initialized server = %+v", ev.Server)
	}
	started, err := c.StartSession(ctx, proto.SessionStart{Cwd: "/w", Model: "m1"})
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	want := &proto.SessionStarted{Header: proto.Header{Type: proto.EventSessionStarted, RequestID: "c2"}, SessionID: "s1", Cwd: "/w", Model: "m1", ContextMaxTokens: 1000, Tools: []string{"bash"}}
	if d := cmp.Diff(want, started); d != "" {
		t.Errorf("session.started (-want +got):\n%s", d)
	}
	if err := c.Send(&proto.TurnStart{SessionID: "s1", Prompt: "x"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	var got []proto.Event
	for range 2 {
		got = append(got, <-c.Events())
	}
	wantEv := []proto.Event{
		&proto.TurnStarted{TurnHeader: turnHead(proto.EventTurnStarted, 1)},
		&proto.AssistantDelta{TurnHeader: turnHead(proto.EventAssistantDelta, 2), Content: "hi"},
	}
	if d := cmp.Diff(wantEv, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	_, err = c.Call(ctx, &proto.SessionClose{SessionID: "nope"})
	var re *client.RequestError
	if !errors.As(err, &re) || re.Code != proto.ErrSessionNotFound || re.Fatal {
		t.Errorf("Call error = %v, want RequestError session_not_found", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	<-done
	if _, ok := <-c.Events(); ok {
		t.Error("Events still open after Close")
	}
	if err := c.Send(&proto.DaemonStatusRequest{}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

func TestSendAssignsRequestID(t *testing.T) {
	cl, sv := net.Pipe()
	c := client.NewConn(cl, cl)
	defer c.Close()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(sv)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	msg := &proto.TurnCancel{SessionID: "s", TurnID: "t"}
	if err := c.Send(msg); err != nil {
		t.Fatal(err)
	}
	if msg.RequestID == "" {
		t.Error("Send left request_id empty")
	}
	if err := c.Send(&proto.SessionClear{Envelope: proto.Envelope{RequestID: "mine"}, SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"turn.cancel","request_id":"` + msg.RequestID + `","session_id":"s","turn_id":"t"}`,
		`{"type":"session.clear","request_id":"mine","session_id":"s"}`,
	}
	got := []string{<-lines, <-lines}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	sv.Close()
}

func TestServerEOFEndsEvents(t *testing.T) {
	cl, sv := net.Pipe()
	c := client.NewConn(cl, cl)
	sv.Close()
	for range c.Events() {
	}
	if err := c.Err(); !errors.Is(err, io.EOF) {
		t.Errorf("Err = %v, want EOF", err)
	}
	if _, err := c.Initialize(t.Context(), "x", "y"); err == nil {
		t.Error("Initialize on an ended connection succeeded")
	}
	c.Close()
}

func TestOversizedFrameIsSkipped(t *testing.T) {
	big := `{"type":"assistant.delta","content":"` + strings.Repeat("a", proto.MaxServerFrameBytes) + `"}` + "\n"
	small := `{"type":"turn.started","turn_id":"t9"}` + "\n"
	c := client.NewConn(strings.NewReader(big+small), io.Discard)
	defer c.Close()
	var got []proto.Event
	for ev := range c.Events() {
		if e, ok := ev.(*proto.Error); ok {
			e.Message = ""
		}
		got = append(got, ev)
	}
	started := &proto.TurnStarted{}
	started.Type, started.TurnID = proto.EventTurnStarted, "t9"
	want := []proto.Event{&proto.Error{Header: proto.Header{Type: proto.EventError}, Code: proto.ErrInvalidRequest}, started}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestDialUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "server.sock")
	t.Run("nothing listens", func(t *testing.T) {
		_, err := client.Dial(t.Context(), sock)
		var nd *client.NoDaemonError
		if !errors.As(err, &nd) {
			t.Fatalf("Dial error = %v, want NoDaemonError", err)
		}
		for _, want := range []string{sock, "scv run", "scv start"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("daemon listens", func(t *testing.T) {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		served := make(chan chan struct{}, 1)
		go func() {
			sv, err := ln.Accept()
			if err != nil {
				close(served)
				return
			}
			served <- fakeServer(t, sv, handshake)
		}()
		c, err := client.Dial(t.Context(), sock)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(t.Context(), "t", "v"); err != nil {
			t.Errorf("Initialize: %v", err)
		}
		c.Close()
		if done, ok := <-served; ok {
			<-done
		}
	})
}

func TestCallWithoutAnswer(t *testing.T) {
	cl, sv := net.Pipe()
	defer sv.Close()
	go io.Copy(io.Discard, sv) // a server that reads and never answers
	c := client.NewConn(cl, cl)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Initialize(ctx, "t", "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Initialize with a deadline = %v, want DeadlineExceeded", err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.StartSession(t.Context(), proto.SessionStart{Cwd: "/"})
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, client.ErrClosed) {
			t.Errorf("StartSession after Close = %v, want ErrClosed", err)
		}
	case <-time.After(2500 * time.Millisecond):
		t.Fatal("StartSession did not return after Close")
	}
}

// TestTypedAnswers: CallFor gives the answer as its own type, and refuses
// an answer of another type; an event type the client does not know
// arrives as *proto.Unknown, whole.
func TestTypedAnswers(t *testing.T) {
	cl, sv := net.Pipe()
	done := fakeServer(t, sv, func(m map[string]any) []proto.Event {
		if m["type"] == proto.TypeDaemonStatus {
			id, _ := m["request_id"].(string)
			return []proto.Event{&proto.Unknown{Raw: []byte(`{"type":"daemon.sleeping","request_id":"` + id + `","for":3}`)}}
		}
		return handshake(m)
	})
	c := client.NewConn(cl, cl)
	ctx := t.Context()
	if _, err := client.CallFor[*proto.SessionStarted](ctx, c, &proto.Initialize{ProtocolVersion: proto.Version}); err == nil || !strings.Contains(err.Error(), `unexpected answer "initialized"`) {
		t.Errorf("CallFor with the wrong answer type = %v", err)
	}
	ev, err := c.Call(ctx, &proto.DaemonStatusRequest{})
	u, ok := ev.(*proto.Unknown)
	if err != nil || !ok || u.EventType() != "daemon.sleeping" || !strings.Contains(string(u.Raw), `"for":3`) {
		t.Errorf("unknown answer = %#v, %v", ev, err)
	}
	if b, err := proto.EncodeEvent(u); err != nil || string(b) != string(u.Raw) {
		t.Errorf("an unknown event encodes to %s (%v), want the frame as it came", b, err)
	}
	c.Close()
	<-done
}
