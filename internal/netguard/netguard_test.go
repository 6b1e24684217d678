package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"code.dny.dev/ssrf"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr  string
		class string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.127.255.255", "shared (CGNAT)"},
		{"169.254.169.254", "link-local (cloud metadata)"},
		{"169.254.1.1", "link-local"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.1", "benchmarking"},
		{"192.0.0.8", "reserved (IETF protocol assignments)"},
		{"192.88.99.1", "reserved (6to4 relay anycast)"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fc00::1", "unique-local"},
		{"fd12:3456::1", "unique-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "scoped (zoned) IPv6"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"2001:2::1", "benchmarking"},
		{"100::1", "reserved (discard-only)"},
		{"::ffff:127.0.0.1", "loopback (127.0.0.1 embedded in IPv4-mapped IPv6)"},
		{"::ffff:169.254.169.254", "link-local (cloud metadata) (169.254.169.254 embedded in IPv4-mapped IPv6)"},
		{"::10.0.0.1", "private (10.0.0.1 embedded in IPv4-compatible IPv6)"},
		{"::127.0.0.1", "loopback (127.0.0.1 embedded in IPv4-compatible IPv6)"},
		{"64:ff9b::7f00:1", "loopback (127.0.0.1 embedded in NAT64 IPv6)"},
		{"64:ff9b::a9fe:a9fe", "link-local (cloud metadata) (169.254.169.254 embedded in NAT64 IPv6)"},
		{"64:ff9b:1::1", "reserved (local-use NAT64)"},
		{"2002:7f00:1::1", "loopback (127.0.0.1 embedded in 6to4 IPv6)"},
		{"2002:c0a8:101::1", "private (192.168.1.1 embedded in 6to4 IPv6)"},
		// Teredo: server 8.8.8.8, client 127.0.0.1 stored inverted (80ff:fffe).
		{"2001:0:808:808::80ff:fffe", "loopback (127.0.0.1 embedded in Teredo IPv6)"},
		{"2001:0:a00:1::f7f7:f7f7", "private (10.0.0.1 embedded in Teredo server IPv6)"},
		{"2001:4::1", "reserved (IETF protocol assignments)"},
		{"4000::1", "reserved (outside IPv6 global unicast)"},
		{"8.8.8.8", "public"},
		{"1.1.1.1", "public"},
		{"2606:4700:4700::1111", "public"},
		{"::ffff:8.8.8.8", "public"},
		{"64:ff9b::808:808", "public"},
		{"2002:808:808::1", "public"},
		{"2001:0:808:808::f7f7:f7f7", "public"}, // client 8.8.8.8
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			class, public := Classify(netip.MustParseAddr(tt.addr))
			if class != tt.class || public != (tt.class == "public") {
				t.Errorf("Classify(%s) = %q, %v; want %q", tt.addr, class, public, tt.class)
			}
		})
	}
}

// TestClassifyCoversSSRFTable: every range the maintained table denies is
// refused (first, last and a middle address of each prefix).
func TestClassifyCoversSSRFTable(t *testing.T) {
	prefixes := append(append([]netip.Prefix{}, ssrf.IPv4DeniedPrefixes...), ssrf.IPv6DeniedPrefixes...)
	for _, p := range prefixes {
		first := p.Masked().Addr()
		for _, a := range []netip.Addr{first, first.Next(), lastOf(p)} {
			class, public := Classify(a)
			// 6to4 and Teredo are judged by the embedded address; the
			// first address of each embeds 0.0.0.0 and the last embeds
			// 255.255.255.255 (or its inverse), both refused.
			if public {
				t.Errorf("%s (in %s) classified public", a, p)
			}
			if class == "" {
				t.Errorf("%s has no class", a)
			}
		}
	}
}

func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestParseHostLiteral(t *testing.T) {
	tests := []struct {
		host string
		want string // "" = not a literal (a name or malformed)
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"10.0x0.00.1", "10.0.0.1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[fe80::1%25eth0]", "fe80::1%eth0"},
		{"[fe80::1%eth0]", "fe80::1%eth0"},
		{"example.com", ""},
		{"localhost", ""},
		{"1.2.3.4.example", ""},
		{"0x7g.1", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"4294967296", ""},
		{"09.1.1.1", ""},
		{"[::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, ok := ParseHostLiteral(tt.host)
			gotS := ""
			if ok {
				gotS = got.String()
			}
			if gotS != tt.want {
				t.Errorf("ParseHostLiteral(%q) = %q, %v; want %q", tt.host, gotS, ok, tt.want)
			}
		})
	}
}

// fakeNet resolves from a table and records every dial instead of making it.
type fakeNet struct {
	names map[string][]netip.Addr
	mu    sync.Mutex
	dials []string
}

func (f *fakeNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	a, ok := f.names[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return a, nil
}

func (f *fakeNet) dial(_ context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dials = append(f.dials, network+" "+addr)
	return nil, errors.New("recording dialer: not dialling")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestDialContextRefuses(t *testing.T) {
	f := &fakeNet{names: map[string][]netip.Addr{
		"meta.test":   addrs("169.254.169.254"),
		"mixed.test":  addrs("93.184.216.34", "10.0.0.1"),
		"mapped.test": addrs("::ffff:192.168.0.1"),
		"ula.test":    addrs("fd00::1"),
		"empty.test":  nil,
	}}
	g := New(Options{Resolver: f.resolve, Dial: f.dial})
	tests := []struct{ addr, want string }{
		{"127.0.0.1:80", "refused 127.0.0.1: loopback address (set web.allow_private_addresses to allow)"},
		{"2130706433:80", "refused 2130706433 (127.0.0.1): loopback address"},
		{"0x7f.1:80", "refused 0x7f.1 (127.0.0.1): loopback address"},
		{"[::1]:443", "refused ::1: loopback address"},
		{"[fe80::1%25eth0]:80", "refused fe80::1%25eth0 (fe80::1%eth0): scoped (zoned) IPv6 address"},
		{"meta.test:80", "refused meta.test (169.254.169.254): link-local (cloud metadata) address"},
		{"mixed.test:443", "refused mixed.test (10.0.0.1): private address"},
		{"mapped.test:80", "refused mapped.test (::ffff:192.168.0.1): private (192.168.0.1 embedded in IPv4-mapped IPv6) address"},
		{"ula.test:80", "refused ula.test (fd00::1): unique-local address"},
		{"empty.test:80", "resolve empty.test: no addresses"},
		{"256.1.1.1:80", "refused 256.1.1.1: malformed numeric IPv4 host"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			_, err := g.DialContext(t.Context(), "tcp", tt.addr)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("DialContext(%s) = %v; want prefix %q", tt.addr, err, tt.want)
			}
		})
	}
	if _, err := g.DialContext(t.Context(), "udp", "8.8.8.8:53"); err == nil {
		t.Error("udp was not refused")
	}
	if len(f.dials) != 0 {
		t.Errorf("guard dialled refused targets: %v", f.dials)
	}
}

func TestDialContextUsesOnlyCheckedAddresses(t *testing.T) {
	f := &fakeNet{names: map[string][]netip.Addr{
		"public.test": addrs("93.184.216.34", "2606:2800::1", "::ffff:8.8.4.4"),
	}}
	calls := 0
	g := New(Options{Dial: f.dial, Resolver: func(ctx context.Context, host string) ([]netip.Addr, error) {
		calls++
		return f.resolve(ctx, host)
	}})
	if _, err := g.DialContext(t.Context(), "tcp", "public.test:443"); err == nil {
		t.Fatal("recording dialer should fail")
	}
	want := []string{"tcp4 93.184.216.34:443", "tcp6 [2606:2800::1]:443", "tcp4 8.8.4.4:443"}
	if diff := cmp.Diff(want, f.dials); diff != "" {
		t.Errorf("dials (-want +got):\n%s", diff)
	}
	if calls != 1 {
		t.Errorf("resolver called %d times, want 1", calls)
	}
}

func TestAllowPrivate(t *testing.T) {
	f := &fakeNet{names: map[string][]netip.Addr{"lan.test": addrs("192.168.1.10")}}
	g := New(Options{AllowPrivate: true, Resolver: f.resolve, Dial: f.dial})
	g.DialContext(t.Context(), "tcp", "lan.test:80")
	g.DialContext(t.Context(), "tcp", "127.1:8080")
	want := []string{"tcp4 192.168.1.10:80", "tcp4 127.0.0.1:8080"}
	if diff := cmp.Diff(want, f.dials); diff != "" {
		t.Errorf("dials (-want +got):\n%s", diff)
	}
}

// TestPortAwareException runs real sockets on 127.0.0.1 only: the excepted
// port is reachable, the same address on another port is refused before any
// connection (the second listener counts accepts).
func TestPortAwareException(t *testing.T) {
	allowed := testutil.Listen(t)
	other := testutil.Listen(t)
	g := New(Options{AllowAddrPorts: []netip.AddrPort{allowed.Addr}})

	c, err := g.DialContext(t.Context(), "tcp", allowed.Addr.String())
	if err != nil {
		t.Fatalf("dial excepted port: %v", err)
	}
	c.Close()
	for _, a := range []string{other.Addr.String(), "localhost:" + other.Port(), "2130706433:" + other.Port()} {
		if _, err := g.DialContext(t.Context(), "tcp", a); err == nil {
			t.Errorf("dial %s was not refused", a)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := other.Accepted(); n != 0 {
		t.Errorf("refused listener accepted %d connections", n)
	}
	if n := allowed.Accepted(); n != 1 {
		t.Errorf("allowed listener accepted %d connections, want 1", n)
	}
}

// TestDefaultDialerControl: the default dialer's Control refuses an
// unchecked address even when called directly.
func TestDefaultDialerControl(t *testing.T) {
	l := testutil.Listen(t)
	g := New(Options{})
	d := &net.Dialer{Control: g.control}
	if _, err := d.DialContext(t.Context(), "tcp", l.Addr.String()); err == nil {
		t.Fatal("control did not refuse loopback")
	}
	time.Sleep(50 * time.Millisecond)
	if n := l.Accepted(); n != 0 {
		t.Errorf("listener accepted %d connections", n)
	}
}
