package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

func serveConn(t *testing.T, srv *server.Server) *client.Conn {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(t.Context(), toServer, fromServer)
		fromServer.Close()
	}()
	c := client.NewConn(toClient, fromClient)
	t.Cleanup(func() { c.Close(); <-done })
	if _, err := c.Initialize(t.Context(), "t", "0"); err != nil {
		t.Fatal(err)
	}
	return c
}

// The daemon's administrative requests (reload, bridge settings, logout)
// reach Admin with a decoder of the full request and are answered with
// daemon.status; without Admin they are unsupported.
func TestAdminRequests(t *testing.T) {
	var got []string
	srv := server.New(server.Options{Admin: func(ctx context.Context, typ string, decode func(any) error) (proto.DaemonStatus, error) {
		var m proto.ClawbotSettings
		if err := decode(&m); err != nil {
			return proto.DaemonStatus{}, err
		}
		got = append(got, typ+":"+m.Account)
		if m.Account == "bad" {
			return proto.DaemonStatus{}, errors.New("account bad is not logged in")
		}
		return proto.DaemonStatus{PID: 7, Clawbot: []proto.ClawbotAccount{{Account: m.Account, State: "starting"}}}, nil
	}})
	c := serveConn(t, srv)
	ev, err := c.Call(t.Context(), &proto.ClawbotSettings{Envelope: proto.Envelope{Type: proto.TypeClawbotSettings}, Account: "work"})
	if err != nil || ev.Type != proto.EventDaemonStatus || ev.Status == nil || ev.Status.Clawbot[0].Account != "work" {
		t.Fatalf("clawbot.settings answer = %+v, %v", ev, err)
	}
	if _, err := c.Call(t.Context(), &proto.ClawbotRef{Envelope: proto.Envelope{Type: proto.TypeClawbotLogout}, Account: "bad"}); err == nil || !strings.Contains(err.Error(), "invalid_request: account bad is not logged in") {
		t.Errorf("failed logout answer: %v", err)
	}
	if _, err := c.Call(t.Context(), &proto.Envelope{Type: proto.TypeDaemonReload}); err != nil {
		t.Errorf("daemon.reload: %v", err)
	}
	if strings.Join(got, ",") != "clawbot.settings:work,clawbot.logout:bad,daemon.reload:" {
		t.Errorf("admin calls = %v", got)
	}

	plain := serveConn(t, server.New(server.Options{}))
	var re *client.RequestError
	if _, err := plain.Call(t.Context(), &proto.Envelope{Type: proto.TypeDaemonReload}); !errors.As(err, &re) || re.Code != proto.ErrUnsupported {
		t.Errorf("daemon.reload without Admin: %v", err)
	}
}
