package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// testNet is the injected resolver and dialer. The dialer dials loopback
// addresses for real (the allowed servers, or the trap if the guard is
// broken) and refuses, and fails the test for, every other address: a
// broken guard never sends real traffic off the machine.
type testNet struct {
	t     *testing.T
	names map[string][]netip.Addr
	mu    sync.Mutex
	wild  []string
	// to443, when set, is where a dial of a loopback address on port 443
	// goes (a local server standing in for the default HTTPS port).
	to443 string
}

func (n *testNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := n.names[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host (test resolver)")
}

func (n *testNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		n.mu.Lock()
		n.wild = append(n.wild, addr)
		n.mu.Unlock()
		n.t.Errorf("guard asked to dial non-loopback %s %s", network, addr)
		return nil, errors.New("test dialer: refusing non-loopback address")
	}
	if n.to443 != "" && ap.Port() == 443 {
		addr = n.to443
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func mustAddrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// testNames maps the host names tests use: names for the allowed local
// servers and names that resolve to refused addresses.
func testNames() map[string][]netip.Addr {
	lo := mustAddrs("127.0.0.1")
	return map[string][]netip.Addr{
		"example.com":        lo,
		"docs.example.com":   lo,
		"api.example.com":    lo,
		"v1.api.example.com": lo,
		"other.example.org":  lo,
		"localhost":          mustAddrs("127.0.0.1", "::1"),
		"loop.test":          lo,
		"meta.test":          mustAddrs("169.254.169.254"),
		"private.test":       mustAddrs("10.1.2.3"),
		"mixed.test":         mustAddrs("93.184.216.34", "10.0.0.1"),
		"mixed6.test":        mustAddrs("2606:2800:220:1::1", "fd00::1"),
		"mapped.test":        mustAddrs("::ffff:127.0.0.1"),
		"cgnat.test":         mustAddrs("100.100.100.100"),
		"ula.test":           mustAddrs("fd12:3456::1"),
		"linklocal6.test":    mustAddrs("fe80::1"),
		"nat64.test":         mustAddrs("64:ff9b::a9fe:a9fe"),
	}
}

type fixture struct {
	net  *testNet
	trap *testutil.Listener
}

// newFixture builds a guard allowing exactly the given servers' ports.
func newFixture(t *testing.T, servers ...*httptest.Server) (*fixture, *netguard.Guard) {
	t.Helper()
	f := &fixture{net: &testNet{t: t, names: testNames()}, trap: testutil.Listen(t)}
	var allow []netip.AddrPort
	for _, s := range servers {
		allow = append(allow, s.Listener.Addr().(*net.TCPAddr).AddrPort())
	}
	g := netguard.New(netguard.Options{Resolver: f.net.resolve, Dial: f.net.dial, AllowAddrPorts: allow})
	return f, g
}

// newFixtureOn443 is newFixture for one server reached as if on the
// default HTTPS port: the guard allows loopback port 443 and the dialer
// takes such a dial to the server's real port, so URLs carry no port.
func newFixtureOn443(t *testing.T, srv *httptest.Server) (*fixture, *netguard.Guard) {
	t.Helper()
	f := &fixture{net: &testNet{t: t, names: testNames(), to443: srv.Listener.Addr().String()}, trap: testutil.Listen(t)}
	allow := []netip.AddrPort{srv.Listener.Addr().(*net.TCPAddr).AddrPort(), netip.MustParseAddrPort("127.0.0.1:443")}
	g := netguard.New(netguard.Options{Resolver: f.net.resolve, Dial: f.net.dial, AllowAddrPorts: allow})
	return f, g
}

func newFetchTool(t *testing.T, opts FetchOptions) tool.Tool {
	t.Helper()
	tl, err := NewFetch(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// call runs a tool the way the server does: validate, plan, run.
func call(t *testing.T, tl tool.Tool, args any, limit int) (tool.Plan, tool.Result) {
	t.Helper()
	raw, _ := json.Marshal(args)
	reg, err := tool.NewRegistry(tl)
	if err != nil {
		t.Fatal(err)
	}
	p, res, ok := reg.Prepare(tool.Env{OutputLimit: limit}, tl.Name(), raw)
	if !ok {
		return tool.Plan{}, res
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return p, p.Run(ctx)
}

func fetchArgs(u string) map[string]any { return map[string]any{"url": u} }

func portOf(s *httptest.Server) string {
	return strconv.Itoa(int(s.Listener.Addr().(*net.TCPAddr).Port))
}

// tlsServer starts an HTTPS server whose certificate covers example.com,
// *.example.com, other.example.org and 127.0.0.1, and returns the pool that
// trusts it.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "scv test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"example.com", "*.example.com", "*.api.example.com", "other.example.org"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	s := httptest.NewUnstartedServer(h)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, pool
}
