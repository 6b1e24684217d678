package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/tool"
)

// protocolVersion is the version SCV asks for; servers may answer with an
// older one they support. It is the last version with the initialize
// handshake that every server speaks.
const protocolVersion = "2025-11-25"

// conn is one live connection to a server (and, for stdio, its process).
type conn struct {
	server        string
	sess          *sdk.ClientSession
	child         *proc.Child
	stderr        *stderrLog
	httpTr        *http.Transport
	started       time.Time
	sessEnded     chan struct{}
	changesAtList uint64
	info          string
	closeOnce     sync.Once
	progressMu    sync.Mutex
	progress      map[string]func(string)
}

// connect starts the server (stdio) or reaches it (HTTP), runs the
// handshake and lists its tools, within the startup timeout. On failure the
// returned conn (if any) has been closed and only serves the error report.
func (in *instance) connect() (*conn, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), in.startupTimeout())
	defer cancel()
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-in.quit:
			cancel()
		case <-stopWatch:
		}
	}()
	c := &conn{server: in.srv.Name, started: time.Now(), sessEnded: make(chan struct{}), progress: map[string]func(string){}}
	var t sdk.Transport
	if in.srv.URL == "" {
		c.stderr = newStderrLog(in.m.opts.Logger, in.srv.Name)
		// The sandbox confines the thread the server is started from; its
		// temporary directory goes once the server and its escapees are
		// stopped.
		cmd, err := sandbox.Wrap(in.srv.Sandbox, in.srv.Dir, in.srv.Command, in.srv.Args, in.srv.Env)
		if err != nil {
			return nil, nil, fmt.Errorf("start %s: %w", in.srv.Command, err)
		}
		child, err := proc.Start(proc.Spec{Path: cmd.Path, Args: cmd.Args, Dir: in.srv.Dir, Env: cmd.Env,
			Stderr: c.stderr, Grace: in.m.opts.Grace, Tag: in.tag, Contain: in.m.opts.Contain, AfterExit: cmd.Close, Confine: cmd.Confine})
		if err != nil {
			cmd.Close()
			return nil, nil, fmt.Errorf("start %s: %w", in.srv.Command, err)
		}
		c.child = child
		t = &sdk.IOTransport{Reader: child.Stdout, Writer: child.Stdin, MaxLineLength: in.m.opts.MaxMessageBytes}
	} else {
		c.httpTr = newHTTPTransport()
		t = &sdk.StreamableClientTransport{Endpoint: in.srv.URL, MaxEventSize: in.m.opts.MaxMessageBytes,
			HTTPClient: &http.Client{Transport: headerTransport{base: c.httpTr, headers: in.srv.Headers}}}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "scv", Version: in.m.opts.Version}, &sdk.ClientOptions{
		Logger: in.m.opts.Logger.With("server", in.srv.Name),
		// No roots: a server works where its configuration says.
		Capabilities:                &sdk.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { in.toolListChanged() },
		ProgressNotificationHandler: c.onProgress,
	})
	sess, err := client.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		c.close(in.m.opts.Grace)
		return c, nil, in.startFailure(ctx, c, err)
	}
	c.sess = sess
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		_ = sess.Wait()
		close(c.sessEnded)
	}()
	if r := sess.InitializeResult(); r != nil && r.ServerInfo != nil {
		c.info = strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
	}
	in.mu.Lock()
	c.changesAtList = in.changes
	in.mu.Unlock()
	tools, err := listTools(ctx, sess)
	if err != nil {
		c.close(in.m.opts.Grace)
		return c, nil, in.startFailure(ctx, c, fmt.Errorf("list its tools: %w", err))
	}
	return c, tools, nil
}

// startFailure explains why a start failed, in words a user can act on.
func (in *instance) startFailure(ctx context.Context, c *conn, err error) error {
	select {
	case <-in.quit:
		return errStopped
	default:
	}
	msg := err.Error()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("no answer within %d s (mcp.servers.%s.startup_timeout_seconds)", int(in.startupTimeout().Seconds()), in.srv.Name)
	case c.child != nil && c.child.Result().Signal == "" && !c.child.Result().Cancelled:
		// close has waited for the process: it exited by itself.
		msg = "the server exited during start-up (" + describeExit(c.child.Result()) + ")"
	}
	if tail := c.tail(); tail != "" {
		msg += "; its stderr ends with: " + tail
	}
	return errors.New(msg)
}

func describeExit(r proc.Result) string {
	switch {
	case r.ExitCode != nil:
		return fmt.Sprintf("exit status %d", *r.ExitCode)
	case r.Signal != "":
		return "killed by signal " + r.Signal
	}
	return "ended"
}

// tail is the end of the server's stderr, short enough for a message.
func (c *conn) tail() string {
	if c.stderr == nil {
		return ""
	}
	t := c.stderr.Tail()
	if len(t) > 512 {
		t = "…" + t[len(t)-512:]
		for len(t) > 0 && t[0]&0xC0 == 0x80 {
			t = t[1:]
		}
	}
	return strings.Join(strings.Fields(t), " ")
}

// waitEnded returns when the connection ended by itself: the session closed
// or, for stdio, the server process exited (a setsid escapee may still hold
// its stdout open).
func (c *conn) waitEnded() {
	if c.child != nil {
		select {
		case <-c.sessEnded:
		case <-c.child.Done():
		}
		return
	}
	<-c.sessEnded
}

// ended says the connection is gone.
func (c *conn) ended() bool {
	select {
	case <-c.sessEnded:
		return true
	default:
	}
	if c.child != nil {
		select {
		case <-c.child.Done():
			return true
		default:
		}
	}
	return false
}

// endError describes how a connection ended by itself.
func (c *conn) endError() error {
	if c.child != nil {
		// The connection ends as the process exits; the process is seen
		// gone a moment later.
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-c.child.Done():
			return fmt.Errorf("the server exited (%s)", describeExit(c.child.Result()))
		case <-t.C:
		}
	}
	return errors.New("the server closed the connection")
}

// close ends the connection: a stdio server first gets its stdin closed and
// a moment to exit, then its group gets TERM, the grace period and KILL,
// and whatever still carries its tag is stopped too.
func (c *conn) close(grace time.Duration) {
	c.closeOnce.Do(func() {
		if c.child != nil {
			_ = c.child.Stdin.Close()
			t := time.NewTimer(politeWait)
			select {
			case <-c.child.Done():
			case <-t.C:
			}
			t.Stop()
			c.child.Stop()
			// A setsid escapee may still hold the server's stdout: reading
			// ends here, so calls still waiting fail instead of hanging.
			_ = c.child.Stdout.Close()
		}
		if c.sess != nil {
			_ = c.sess.Close()
			<-c.sessEnded
		}
		if c.httpTr != nil {
			c.httpTr.CloseIdleConnections()
		}
	})
}

// onProgress passes a server's progress notification to the call that
// asked for it.
func (c *conn) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token := fmt.Sprint(p.ProgressToken)
	c.progressMu.Lock()
	send := c.progress[token]
	c.progressMu.Unlock()
	if send == nil {
		return
	}
	msg := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		msg = fmt.Sprintf("progress %g/%g", p.Progress, p.Total)
	}
	if p.Message != "" {
		msg += ": " + p.Message
	}
	send(tool.TruncateUTF8(msg, 200))
}

func (c *conn) watchProgress(token string, send func(string)) func() {
	if send == nil {
		return func() {}
	}
	c.progressMu.Lock()
	c.progress[token] = send
	c.progressMu.Unlock()
	return func() {
		c.progressMu.Lock()
		delete(c.progress, token)
		c.progressMu.Unlock()
	}
}

// newHTTPTransport is a transport of our own: no proxy read from the
// environment, bounded connection set-up, streams as long as the server
// keeps them.
func newHTTPTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}
