package app

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/proto"
)

// daemonOptions are the options of a daemon in a fresh home, tracking its
// tools' processes by group and tag (nothing of this process's cgroup or
// reaping changes).
func daemonOptions(t *testing.T) Options {
	t.Helper()
	home := t.TempDir()
	layout := paths.Layout{Home: home}
	tr, err := delegation.New(delegation.Options{Dir: layout.Delegations(), CallDir: layout.Calls()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := proc.NewContainment(proc.ContainOptions{Want: proc.MechGroupTag, Instance: home})
	if err != nil {
		t.Fatal(err)
	}
	return Options{Layout: layout, Env: map[string]string{"HOME": t.TempDir(), "PATH": "/usr/bin:/bin"}, Tracker: tr, Contain: c}
}

// TestDaemonServesStatusAndStops runs the daemon NewDaemon builds: it
// answers daemon.status with its own pid, database and (empty) bridge,
// and daemon.shutdown ends Run.
func TestDaemonServesStatusAndStops(t *testing.T) {
	opts := daemonOptions(t)
	d, err := NewDaemon(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(t.Context()) }()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var conn *client.Conn
	for conn == nil {
		c, err := client.Dial(ctx, opts.Layout.Socket())
		var nd *client.NoDaemonError
		switch {
		case err == nil:
			conn = c
		case errors.As(err, &nd) && ctx.Err() == nil:
			time.Sleep(10 * time.Millisecond)
		default:
			t.Fatalf("dial the daemon: %v", err)
		}
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, "test", "0"); err != nil {
		t.Fatal(err)
	}
	reply, err := client.CallFor[*proto.DaemonStatusReply](ctx, conn, &proto.DaemonStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	st := reply.Status
	if st == nil || st.PID != os.Getpid() || st.Database == nil || st.Database.Path != opts.Layout.Database() ||
		st.Provider == nil || st.ProcessTracking == "" || len(st.Clawbot) != 0 {
		t.Fatalf("daemon.status = %+v; want this pid, the home's database, a provider, process tracking and no bridge accounts", st)
	}
	if _, err := conn.Call(ctx, &proto.DaemonShutdown{}); err != nil {
		t.Fatalf("daemon.shutdown: %v", err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run after daemon.shutdown: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Run did not return after daemon.shutdown")
	}
	if _, err := os.Stat(opts.Layout.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket is still there after Run: %v", err)
	}
}

// TestNewDaemonNeedsProcessTracking refuses to build a daemon that could
// not account for the processes its tools start.
func TestNewDaemonNeedsProcessTracking(t *testing.T) {
	opts := daemonOptions(t)
	opts.Contain = nil
	if d, err := NewDaemon(t.Context(), opts); err == nil {
		d.Close()
		t.Fatal("NewDaemon without a containment succeeded")
	}
}
