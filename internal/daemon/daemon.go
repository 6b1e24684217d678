// Package daemon runs SCV's long-lived server on the instance socket
// (docs/runtime.md, "The daemon"): an exclusive lock on server.lock, a 0600
// socket in the 0700 home (a stale one replaced), one protocol connection per
// client, a child subreaper that reaps what reparents to it, delegation
// reconciling at start and every 60 s, and a graceful stop within 5 s.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
)

// Server serves one protocol connection until it ends or ctx does
// (*server.Server is the one SCV runs). The daemon owns the socket, the
// lock and the reaper, never what a connection says; naming no server
// type keeps it a low package that internal/app, which builds both, can
// import without standing a floor higher.
type Server interface {
	Serve(ctx context.Context, r io.Reader, w io.Writer) error
}

// Options configure the daemon.
type Options struct {
	Layout paths.Layout
	Server Server
	Logger *slog.Logger
	// Reconcile stops orphaned delegations; called at start and every
	// ReconcileEvery (60 s). nil disables it.
	Reconcile      func(ctx context.Context) (int, error)
	ReconcileEvery time.Duration
	// Subreaper makes the daemon a child subreaper (Linux) and reaps
	// adopted children.
	Subreaper bool
	// Ready, if set, is called once the socket accepts connections.
	Ready func()
	// Drain, if set, is called once every connection has ended, while the
	// lock, the socket and the reaper are still held (it stops what the
	// sessions shared, such as MCP servers).
	Drain func()
	// ReclaimEvery is how often the daemon checks whether to give memory
	// back after a burst (reclaim.go); 0 means every 2 s, negative never.
	ReclaimEvery time.Duration
	// Idle, if set, says no turn is running; memory is given back only
	// then.
	Idle func() bool
	// Components run beside the server once the socket listens (the
	// WeChat bridge's supervisor). Each must return soon after its ctx
	// ends; the daemon joins them before Drain.
	Components []func(ctx context.Context)
}

// ErrRunning means another daemon holds the home's lock.
var ErrRunning = errors.New("another scv daemon is already running")

// Run serves until ctx ends, then stops gracefully.
func Run(ctx context.Context, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReconcileEvery <= 0 {
		opts.ReconcileEvery = 60 * time.Second
	}
	if opts.ReclaimEvery == 0 {
		opts.ReclaimEvery = reclaimTick
	}
	l := opts.Layout
	if err := l.Ensure(); err != nil {
		return err
	}
	unlock, err := lock(l.Lock())
	if err != nil {
		return err
	}
	defer unlock()
	ln, err := listen(l.Socket())
	if err != nil {
		return err
	}
	defer os.Remove(l.Socket())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var bg sync.WaitGroup
	defer bg.Wait()
	if opts.Subreaper {
		if err := proc.BecomeSubreaper(); err != nil {
			opts.Logger.Warn("cannot become a child subreaper", "err", err)
		} else {
			r := &proc.Reaper{}
			bg.Add(1)
			go func() { defer bg.Done(); r.Run(ctx) }()
		}
	}
	if opts.Reconcile != nil {
		bg.Add(1)
		go func() { defer bg.Done(); reconcileLoop(ctx, opts) }()
	}
	if opts.ReclaimEvery > 0 {
		bg.Go(func() { reclaimLoop(ctx, opts.ReclaimEvery, opts.Idle, opts.Logger) })
	}
	opts.Logger.Info("daemon listening", "socket", l.Socket(), "pid", os.Getpid())
	var comps sync.WaitGroup
	for _, run := range opts.Components {
		comps.Go(func() { run(ctx) })
	}
	if opts.Ready != nil {
		opts.Ready()
	}
	err = serve(ctx, ln, opts)
	cancel() // serve may also end on an accept error
	comps.Wait()
	if opts.Drain != nil {
		opts.Drain()
	}
	return err
}

func reconcileLoop(ctx context.Context, opts Options) {
	t := time.NewTicker(opts.ReconcileEvery)
	defer t.Stop()
	for {
		n, err := opts.Reconcile(ctx)
		if err != nil {
			opts.Logger.Warn("reconcile delegations", "err", err)
		} else if n > 0 {
			opts.Logger.Info("stopped orphaned delegations", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// serve accepts connections until ctx ends, then closes the listener,
// cancels every connection and waits for them (bounded so the daemon exits
// within 5 s of SIGTERM).
func serve(ctx context.Context, ln net.Listener, opts Options) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := opts.Server.Serve(ctx, c, c); err != nil {
				opts.Logger.Debug("connection ended", "err", err)
			}
			c.Close()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * time.Second):
		opts.Logger.Warn("connections did not end in time; closing them")
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		<-done
	}
	return nil
}

// lock takes the exclusive, non-blocking lock on path and records our PID.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w on this home (pid %s, lock %s); use `scv stop` or another --scv-home", ErrRunning, pid, path)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// listen replaces any stale socket (we hold the lock, so no live daemon
// owns it) and listens with mode 0600.
func listen(path string) (net.Listener, error) {
	// sockaddr_un holds 108 bytes including the terminating NUL.
	if len(path) > 107 {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than a Unix socket allows (107); use a shorter --scv-home", path, len(path))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}
