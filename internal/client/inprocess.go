package client

import (
	"context"
	"io"
	"time"
)

// ServeFunc serves one protocol connection until the client's EOF or ctx's
// end (server.Server.Serve).
type ServeFunc func(ctx context.Context, r io.Reader, w io.Writer) error

// InProcessCloseWait bounds how long Close waits for an in-process server
// to finish the connection after the client's EOF before it cancels it.
const InProcessCloseWait = 10 * time.Second

// InProcess is a connection to a server in this process over two in-memory
// pipes, the same protocol a separate `scv server --stdio` speaks: scv
// exec, the --no-daemon TUI and the WeChat bridge use it.
type InProcess struct {
	*Conn
	cancel context.CancelFunc
	served chan struct{}
}

// ServeInProcess starts serve on a new in-memory connection. The
// connection lives until Close, or until ctx ends.
func ServeInProcess(ctx context.Context, serve ServeFunc) *InProcess {
	sctx, cancel := context.WithCancel(ctx)
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	p := &InProcess{cancel: cancel, served: make(chan struct{})}
	go func() {
		defer close(p.served)
		_ = serve(sctx, toServer, fromServer)
		fromServer.Close() // the client's reader sees EOF
		toServer.Close()   // and the server's reader ends
	}()
	p.Conn = NewConn(toClient, fromClient)
	return p
}

// Close ends the connection: EOF for the server, which cancels what the
// connection still runs and returns; after InProcessCloseWait the serve
// context is cancelled too. It returns once serve has returned, and may be
// called more than once.
func (p *InProcess) Close() error {
	p.Conn.Close()
	select {
	case <-p.served:
	case <-time.After(InProcessCloseWait):
		p.cancel()
		<-p.served
	}
	p.cancel()
	return nil
}
