package testutil

import (
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
)

// Listener is a loopback TCP listener that accepts every connection, counts
// it and closes it. Refused targets point at it, so a dial that should
// never have happened shows up as a count instead of reaching anything.
type Listener struct {
	Addr  netip.AddrPort
	count atomic.Int64
}

// Listen starts a Listener on 127.0.0.1; it stops when the test ends.
func Listen(t testing.TB) *Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &Listener{Addr: l.Addr().(*net.TCPAddr).AddrPort()}
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

// Accepted is how many connections the listener has accepted.
func (l *Listener) Accepted() int64 { return l.count.Load() }
