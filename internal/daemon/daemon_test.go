package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testServer() *server.Server {
	return server.New(server.Options{Factory: server.FactoryFunc(func(context.Context, string, server.SessionRequest) (*agent.Session, server.SessionInfo, error) {
		return nil, server.SessionInfo{}, errors.New("no sessions in this test")
	})})
}

// start runs the daemon until the returned stop is called.
func start(t *testing.T, l paths.Layout, reconcile func(context.Context) (int, error), every time.Duration) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Layout: l, Server: testServer(), Reconcile: reconcile, ReconcileEvery: every, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("daemon ended at start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("daemon not ready")
	}
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("daemon did not stop")
			return nil
		}
	}
}

func TestLockSocketAndStop(t *testing.T) {
	l := paths.Layout{Home: filepath.Join(t.TempDir(), "home")}
	// A stale socket file from a dead daemon is replaced.
	if err := os.MkdirAll(l.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Socket(), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := start(t, l, nil, 0)
	for path, want := range map[string]os.FileMode{l.Home: 0o700, l.Socket(): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	if st, _ := os.Stat(l.Socket()); st.Mode()&os.ModeSocket == 0 {
		t.Error("the stale file was not replaced by a socket")
	}
	c, err := net.Dial("unix", l.Socket())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// A second daemon on the same home fails fast.
	err = Run(t.Context(), Options{Layout: l, Server: testServer()})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("second daemon: %v, want ErrRunning", err)
	}
	if b, err := os.ReadFile(l.Lock()); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file = %q, %v; want this process's pid", b, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	// The lock is free again.
	start(t, l, nil, 0)()
}

func TestReconcileAtStartAndPeriodically(t *testing.T) {
	l := paths.Layout{Home: filepath.Join(t.TempDir(), "home")}
	var calls atomic.Int32
	stop := start(t, l, func(context.Context) (int, error) { calls.Add(1); return 0, nil }, 20*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("reconcile ran %d times", calls.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	n := calls.Load()
	time.Sleep(60 * time.Millisecond)
	if calls.Load() != n {
		t.Fatal("reconcile kept running after the daemon stopped")
	}
}

func TestSocketPathTooLong(t *testing.T) {
	long := t.TempDir()
	for len(long) < 120 {
		long = filepath.Join(long, "abcdefghij")
	}
	err := Run(t.Context(), Options{Layout: paths.Layout{Home: long}, Server: testServer()})
	if err == nil || !strings.Contains(err.Error(), "shorter --scv-home") {
		t.Fatalf("err = %v", err)
	}
}

// TestDrainBeforeRelease: Drain runs once, after the connections ended and
// while the socket (and so the lock) is still held: what the sessions shared
// is stopped before another daemon can start on the same home.
func TestDrainBeforeRelease(t *testing.T) {
	l := paths.Layout{Home: filepath.Join(t.TempDir(), "home")}
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan struct{})
	var drains atomic.Int32
	var socketThere atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Layout: l, Server: testServer(), Ready: func() { close(ready) }, Drain: func() {
			drains.Add(1)
			_, err := os.Stat(l.Socket())
			socketThere.Store(err == nil)
		}})
	}()
	<-ready
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if drains.Load() != 1 || !socketThere.Load() {
		t.Errorf("Drain ran %d times, socket present during it: %v", drains.Load(), socketThere.Load())
	}
	if _, err := os.Stat(l.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after Run: %v", err)
	}
}
