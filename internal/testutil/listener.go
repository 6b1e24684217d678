package testutil

import (
	"crypto/rand"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Listener is a listener that accepts every connection, counts it and
// closes it. Refused targets point at it, so a dial that should never have
// happened shows up as a count instead of reaching anything.
type Listener struct {
	// Addr is the address of a TCP listener (zero for a Unix socket).
	Addr    netip.AddrPort
	addr    net.Addr
	network string
	count   atomic.Int64

	mu     sync.Mutex
	probes map[string]bool // remote addresses of Settled's own probes
	seen   map[string]bool // remote addresses accepted so far
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
	cl := &Listener{addr: l.Addr(), network: network, probes: map[string]bool{}, seen: map[string]bool{}}
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
			cl.accepted(c.RemoteAddr())
			c.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return cl
}

func (l *Listener) accepted(from net.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from != nil && from.String() != "" {
		l.seen[from.String()] = true
		if l.probes[from.String()] {
			return
		}
	}
	l.count.Add(1)
}

// Port is the listener's port as text.
func (l *Listener) Port() string { return strconv.Itoa(int(l.Addr.Port())) }

// NetAddr is the address the listener listens on, of any network.
func (l *Listener) NetAddr() net.Addr { return l.addr }

// Accepted is how many connections the listener has accepted. A
// connection a process made just before it exited may still wait in the
// accept queue: use Settled when the count must include it.
func (l *Listener) Accepted() int64 { return l.count.Load() }

// Settled is Accepted once every connection already made has been
// accepted. It connects a probe of its own, from an address it binds, and
// waits (up to 10 s) until the accept loop has taken it: the accept queue
// is first in, first out, so every connection made before the probe has
// been counted by then. The probe itself is not counted.
func (l *Listener) Settled(t testing.TB) int64 {
	t.Helper()
	var d net.Dialer
	if l.network == "unix" {
		// An unbound Unix client has no address the listener could see.
		d.LocalAddr = &net.UnixAddr{Net: "unix", Name: "@scv-probe-" + rand.Text()}
	}
	c, err := d.DialContext(t.Context(), l.network, l.addr.String())
	if err != nil {
		t.Fatalf("the probe could not reach the test's own listener %s: %v", l.addr, err)
	}
	from := c.LocalAddr().String()
	l.mu.Lock()
	l.probes[from] = true
	if l.seen[from] { // accepted before it was registered: count it as the probe
		l.count.Add(-1)
	}
	l.mu.Unlock()
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		done := l.seen[from]
		l.mu.Unlock()
		if done {
			return l.count.Load()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test's own listener %s did not accept a probe within 10 s", l.addr)
		}
		time.Sleep(time.Millisecond)
	}
}
