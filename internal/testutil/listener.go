package testutil

import (
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
)

// Listener is a listener that accepts every connection, counts it and
// closes it. Refused targets point at it, so a dial that should never have
// happened shows up as a count instead of reaching anything.
type Listener struct {
	// Addr is the address of a TCP listener (zero for a Unix socket).
	Addr  netip.AddrPort
	addr  net.Addr
	count atomic.Int64
}

// Listen starts a Listener on 127.0.0.1; it stops when the test ends.
func Listen(t testing.TB) *Listener {
	t.Helper()
	return ListenOn(t, "tcp", "127.0.0.1:0")
}

// ListenOn starts a Listener on a stream network ("tcp4", "unix" with a
// path or an @abstract name); it stops when the test ends.
func ListenOn(t testing.TB, network, address string) *Listener {
	t.Helper()
	l, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	cl := &Listener{addr: l.Addr()}
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		cl.Addr = a.AddrPort()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			cl.count.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return cl
}

// Port is the listener's port as text.
func (l *Listener) Port() string { return strconv.Itoa(int(l.Addr.Port())) }

// NetAddr is the address the listener listens on, of any network.
func (l *Listener) NetAddr() net.Addr { return l.addr }

// Accepted is how many connections the listener has accepted.
func (l *Listener) Accepted() int64 { return l.count.Load() }
