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
		enc := json.NewEncoder(c)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("server got invalid JSON %q: %v", sc.Text(), err)
				return
			}
			for _, ev := range reply(m) {
				if err := enc.Encode(ev); err != nil {
					return
				}
			}
		}
	}()
	return done
}

func handshake(m map[string]any) []proto.Event {
	id, _ := m["request_id"].(string)
	switch m["type"] {
	case proto.TypeInitialize:
		return []proto.Event{{Type: proto.EventInitialized, RequestID: id, ProtocolVersion: proto.Version, Server: &proto.Peer{Name: "scv", Version: "test"}}}
	case proto.TypeSessionStart:
		cwd, _ := m["cwd"].(string)
		model, _ := m["model"].(string)
		return []proto.Event{
			{Type: proto.EventSessionStarted, RequestID: id, SessionID: "s1", Cwd: cwd, Model: model, ContextMaxTokens: 1000, Tools: []string{"bash"}},
		}
	case proto.TypeTurnStart:
		return []proto.Event{
			{Type: proto.EventTurnStarted, SessionID: "s1", Seq: 1, TurnID: "t1"},
			{Type: proto.EventAssistantDelta, SessionID: "s1", Seq: 2, TurnID: "t1", Content: proto.Ptr("hi")},
		}
	case proto.TypeSessionClose:
		return []proto.Event{{Type: proto.EventError, RequestID: id, Code: proto.ErrSessionNotFound, Message: "no such session", Fatal: proto.Ptr(false)}}
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
	if ev.Server == nil || ev.Server.Name != "scv" {
		t.Errorf("initialized server = %+v", ev.Server)
	}
	ev, err = c.StartSession(ctx, proto.SessionStart{Cwd: "/w", Model: "m1"})
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	want := proto.Event{Type: proto.EventSessionStarted, RequestID: "c2", SessionID: "s1", Cwd: "/w", Model: "m1", ContextMaxTokens: 1000, Tools: []string{"bash"}}
	if d := cmp.Diff(want, ev); d != "" {
		t.Errorf("session.started (-want +got):\n%s", d)
	}
	if err := c.Send(proto.TurnStart{Envelope: proto.Envelope{Type: proto.TypeTurnStart}, SessionID: "s1", Prompt: "x"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	var got []proto.Event
	for range 2 {
		got = append(got, <-c.Events())
	}
	wantEv := []proto.Event{
		{Type: proto.EventTurnStarted, SessionID: "s1", Seq: 1, TurnID: "t1"},
		{Type: proto.EventAssistantDelta, SessionID: "s1", Seq: 2, TurnID: "t1", Content: proto.Ptr("hi")},
	}
	if d := cmp.Diff(wantEv, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	_, err = c.Call(ctx, proto.SessionRef{Envelope: proto.Envelope{Type: proto.TypeSessionClose}, SessionID: "nope"})
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
	if err := c.Send(proto.Envelope{Type: proto.TypeDaemonStatus}); !errors.Is(err, client.ErrClosed) {
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
	msg := &proto.TurnCancel{Envelope: proto.Envelope{Type: proto.TypeTurnCancel}, SessionID: "s", TurnID: "t"}
	if err := c.Send(msg); err != nil {
		t.Fatal(err)
	}
	if msg.RequestID == "" {
		t.Error("Send left request_id empty")
	}
	if err := c.Send(&proto.SessionRef{Envelope: proto.Envelope{Type: proto.TypeSessionClear, RequestID: "mine"}, SessionID: "s"}); err != nil {
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
		ev.Message = ""
		got = append(got, ev)
	}
	want := []proto.Event{{Type: proto.EventError, Code: proto.ErrInvalidRequest}, {Type: proto.EventTurnStarted, TurnID: "t9"}}
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
