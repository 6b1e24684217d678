package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// instance is one server of one workspace: at most one live connection at a
// time, restarted with backoff after a failure.
type instance struct {
	m         *Manager
	key       string
	srv       Server
	workspace string
	tag       string
	quit      chan struct{} // closed by shutdown

	mu        sync.Mutex
	leases    int
	idleTimer *time.Timer
	retired   bool
	cur       *conn
	starting  chan struct{} // closed when the start in flight ends
	listing   chan struct{} // closed when the re-list in flight ends
	failures  int
	retryAt   time.Time
	lastErr   error
	lastTail  string // stderr tail of the last process that failed
	tools     []*sdk.Tool
	gen       uint64 // counts successful tool lists
	changes   uint64 // counts list_changed notifications
	listedAt  uint64 // changes when the tools were last listed
	startTime time.Duration
	info      string
	// wg counts the goroutines working for this instance; shutdown waits.
	wg sync.WaitGroup
}

func newInstance(m *Manager, key, workspace string, s Server, tag string) *instance {
	return &instance{m: m, key: key, srv: s, workspace: workspace, tag: TagKey + "=" + tag, quit: make(chan struct{})}
}

// errStopped says the server was stopped for good (SCV is shutting down).
var errStopped = errors.New("the MCP server was stopped")

// unavailableError says a failed server waits for its next restart.
type unavailableError struct {
	server string
	wait   time.Duration
	cause  error
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("MCP server %s is unavailable (%v); it is started again in %.0f s", e.server, e.cause, max(1, e.wait.Seconds()))
}

func (e *unavailableError) Unwrap() error { return e.cause }

// ensure returns the live connection, starting the server if needed. With
// wait, a server in backoff is waited for (as long as ctx allows); without,
// an *unavailableError is returned at once.
func (in *instance) ensure(ctx context.Context, wait bool) (*conn, error) {
	sawStart := false
	for {
		in.mu.Lock()
		switch {
		case in.retired:
			in.mu.Unlock()
			return nil, errStopped
		case in.cur != nil && in.cur.ended():
			// watch is about to clear it and schedule the restart.
			in.mu.Unlock()
			select {
			case <-time.After(5 * time.Millisecond):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case in.cur != nil:
			c := in.cur
			in.mu.Unlock()
			return c, nil
		case in.starting != nil:
			ch := in.starting
			in.mu.Unlock()
			select {
			case <-ch:
				sawStart = true
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if d := time.Until(in.retryAt); d > 0 {
			err := &unavailableError{server: in.srv.Name, wait: d, cause: in.lastErr}
			in.mu.Unlock()
			if !wait && sawStart {
				// The start this call waited for failed: that is the news.
				return nil, err.cause
			}
			if !wait {
				return nil, err
			}
			t := time.NewTimer(d)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		in.starting = ch
		in.wg.Add(1)
		in.mu.Unlock()
		go in.start(ch)
	}
}

// start connects in the background (a session that stops waiting does not
// abort a start others may be waiting for) and publishes the outcome.
func (in *instance) start(done chan struct{}) {
	defer in.wg.Done()
	began := time.Now()
	c, tools, err := in.connect()
	in.mu.Lock()
	if err == nil && in.retired {
		in.starting = nil
		close(done)
		in.mu.Unlock()
		c.close(in.m.opts.Grace)
		return
	}
	defer in.mu.Unlock()
	// Waiters see the outcome once done is closed, the log line included.
	defer close(done)
	in.starting = nil
	if err != nil {
		in.failures++
		wait := in.m.opts.backoff(in.failures)
		in.retryAt = time.Now().Add(wait)
		in.lastErr = err
		if c != nil && c.stderr != nil {
			in.lastTail = c.stderr.Tail()
		}
		if !errors.Is(err, errStopped) {
			in.m.opts.Logger.Warn("mcp server did not start", "server", in.srv.Name, "workspace", in.workspace, "err", err, "retry_in", wait)
		}
		return
	}
	in.cur = c
	in.tools = tools
	in.gen++
	in.listedAt = c.changesAtList
	in.startTime = time.Since(began)
	in.info = c.info
	in.lastErr, in.lastTail = nil, ""
	in.m.opts.Logger.Info("mcp server started", "server", in.srv.Name, "workspace", in.workspace, "tools", len(tools), "took", in.startTime)
	in.wg.Add(1)
	go in.watch(c)
}

// watch waits for the connection to end by itself (the server exited or
// hung up), cleans up after it and schedules the restart.
func (in *instance) watch(c *conn) {
	defer in.wg.Done()
	c.waitEnded()
	in.mu.Lock()
	mine := in.cur == c
	var wait time.Duration
	if mine {
		in.cur = nil
		if time.Since(c.started) > resetAfter {
			in.failures = 0
		}
		in.failures++
		wait = in.m.opts.backoff(in.failures)
		in.retryAt = time.Now().Add(wait)
		in.lastErr = errors.New("the server ended") // made precise below
	}
	in.mu.Unlock()
	c.close(in.m.opts.Grace)
	if !mine {
		return
	}
	err, tail := c.endError(), c.tail()
	in.mu.Lock()
	in.lastErr, in.lastTail = err, tail
	in.mu.Unlock()
	in.m.opts.Logger.Warn("mcp server ended", "server", in.srv.Name, "workspace", in.workspace, "err", err, "restart_after", wait)
}

// toolListChanged records a notifications/tools/list_changed.
func (in *instance) toolListChanged() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.changes++
}

// current returns the server's tools for a model request: it starts the
// server when it is not running and its backoff allows, and lists the tools
// again after a list_changed. A server that cannot be reached keeps the
// tools it last listed, so a conversation does not lose them while it
// restarts; the error says why.
func (in *instance) current(ctx context.Context) ([]*sdk.Tool, uint64, error) {
	c, err := in.ensure(ctx, false)
	if err == nil {
		err = in.relistIfChanged(ctx, c)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.tools, in.gen, err
}

func (in *instance) relistIfChanged(ctx context.Context, c *conn) error {
	for {
		in.mu.Lock()
		if in.cur != c || in.changes == in.listedAt {
			in.mu.Unlock()
			return nil
		}
		if ch := in.listing; ch != nil {
			in.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		ch := make(chan struct{})
		in.listing = ch
		seen := in.changes
		in.mu.Unlock()
		lctx, cancel := context.WithTimeout(ctx, in.startupTimeout())
		tools, err := listTools(lctx, c.sess)
		cancel()
		in.mu.Lock()
		in.listing = nil
		close(ch)
		if err == nil && in.cur == c {
			in.tools = tools
			in.gen++
			in.listedAt = seen
		}
		in.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("list the tools of MCP server %s again after it announced a change: %w", in.srv.Name, err)
			in.m.opts.Logger.Warn("mcp server tools not listed again", "server", in.srv.Name, "err", err)
			return err
		}
		in.m.opts.Logger.Info("mcp server tools changed", "server", in.srv.Name, "tools", len(tools))
	}
}

func (in *instance) startupTimeout() time.Duration {
	if in.srv.StartupTimeout > 0 {
		return in.srv.StartupTimeout
	}
	return DefaultStartupTimeout
}

// shutdown stops the server for good and waits for everything working for
// it.
func (in *instance) shutdown() {
	in.mu.Lock()
	if !in.retired {
		in.retired = true
		close(in.quit)
	}
	c := in.cur
	in.cur = nil
	in.mu.Unlock()
	if c != nil {
		c.close(in.m.opts.Grace)
	}
	in.wg.Wait()
}

// listTools lists every tool of the server (all pages), bounded in count.
func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(out) == maxToolsPerServer {
			return out, nil
		}
		out = append(out, t)
	}
	return out, nil
}
