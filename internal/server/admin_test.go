package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// The daemon's requests about its components (reload, bridge settings,
// logout) reach Admin as their typed messages and are answered with
// daemon.status; an Admin error is invalid_request with its message;
// without Admin they are unsupported.
func TestAdminRequests(t *testing.T) {
	var got []string
	srv := server.New(server.Options{Admin: func(ctx context.Context, m proto.Message) (proto.DaemonStatus, error) {
		switch m := m.(type) {
		case *proto.DaemonReload:
			got = append(got, "reload")
		case *proto.ClawbotSettings:
			got = append(got, fmt.Sprintf("settings %s %v %s %s", m.Account, *m.Enabled, m.Workspace, m.RemoteTools))
		case *proto.ClawbotLogout:
			got = append(got, "logout "+m.Account)
			if m.Account == "bad" {
				return proto.DaemonStatus{}, errors.New("account bad is not logged in")
			}
		default:
			t.Errorf("Admin got %T", m)
		}
		return proto.DaemonStatus{PID: 7, Clawbot: []proto.ClawbotAccount{{Account: "work", State: "starting"}}}, nil
	}})
	c, _ := connect(t, srv)
	enabled := true
	ev, err := client.CallFor[*proto.DaemonStatusReply](t.Context(), c, &proto.ClawbotSettings{Account: "work", Enabled: &enabled, Workspace: "/w", RemoteTools: "owner"})
	if err != nil || ev.Status == nil || len(ev.Status.Clawbot) != 1 || ev.Status.Clawbot[0].Account != "work" {
		t.Fatalf("clawbot.settings answer = %+v, %v", ev, err)
	}
	if _, err := c.Call(t.Context(), &proto.ClawbotLogout{Account: "bad"}); err == nil || !strings.Contains(err.Error(), "invalid_request: account bad is not logged in") {
		t.Errorf("failed logout answer: %v", err)
	}
	if _, err := client.CallFor[*proto.DaemonStatusReply](t.Context(), c, &proto.DaemonReload{}); err != nil {
		t.Errorf("daemon.reload: %v", err)
	}
	if diff := cmp.Diff([]string{"settings work true /w owner", "logout bad", "reload"}, got); diff != "" {
		t.Errorf("admin calls (-want +got):\n%s", diff)
	}

	plain, _ := connect(t, server.New(server.Options{}))
	for _, m := range []proto.Message{&proto.DaemonReload{}, &proto.ClawbotSettings{Account: "work"}, &proto.ClawbotLogout{Account: "work"}} {
		var re *client.RequestError
		if _, err := plain.Call(t.Context(), m); !errors.As(err, &re) || re.Code != proto.ErrUnsupported {
			t.Errorf("%s without Admin: %v", m.MessageType(), err)
		}
	}
}
