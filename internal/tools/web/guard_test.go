package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/tool"
)

// refusedTargets lists URLs web_fetch must never connect to, with a word
// the failure must contain (usually the address class). P is replaced by
// the trap's port: loopback targets aim at the trap, so a broken guard
// would show up as an accepted connection there; every other address is
// caught by the recording dialer.
var refusedTargets = []struct{ url, want string }{
	{"http://127.0.0.1:P/", "loopback"},
	{"http://127.1:P/", "loopback"},
	{"http://127.0.1:P/", "loopback"},
	{"http://2130706433:P/", "loopback"},
	{"http://0x7f000001:P/", "loopback"},
	{"http://0x7f.1:P/", "loopback"},
	{"http://0177.0.0.1:P/", "loopback"},
	{"http://017700000001:P/", "loopback"},
	{"http://127.0.0.1.:P/", "loopback"},
	{"http://127.255.255.254:P/", "loopback"},
	{"https://127.0.0.1:P/", "loopback"},
	{"http://[::1]:P/", "loopback"},
	{"http://[::ffff:127.0.0.1]:P/", "loopback"},
	{"http://[::ffff:7f00:1]:P/", "loopback"},
	{"http://[0:0:0:0:0:ffff:127.0.0.1]:P/", "loopback"},
	{"http://[::127.0.0.1]:P/", "IPv4-compatible"},
	{"http://[64:ff9b::127.0.0.1]:P/", "NAT64"},
	{"http://[2002:7f00:1::1]:P/", "6to4"},
	{"http://[2001:0:808:808::80ff:fffe]:P/", "Teredo"},
	{"http://0.0.0.0:P/", "unspecified"},
	{"http://0:P/", "unspecified"},
	{"http://[::]:P/", "unspecified"},
	{"http://localhost:P/", "loopback"},
	{"http://LOCALHOST:P/", "loopback"},
	{"http://localhost.:P/", "loopback"},
	{"http://loop.test:P/", "loopback"},
	{"http://mapped.test:P/", "IPv4-mapped"},
	{"http://%31%32%37.0.0.1:P/", "invalid URL escape"},
	{"http://10.0.0.1/", "private"},
	{"http://172.16.0.1/", "private"},
	{"http://172.31.255.254/", "private"},
	{"http://192.168.1.1/", "private"},
	{"http://100.64.0.1/", "shared (CGNAT)"},
	{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
	{"http://169.254.43518/", "cloud metadata"},
	{"http://2852039166/", "cloud metadata"},
	{"http://0xa9fea9fe/", "cloud metadata"},
	{"http://0251.0376.0251.0376/", "cloud metadata"},
	{"http://[::ffff:169.254.169.254]/", "cloud metadata"},
	{"http://[64:ff9b::a9fe:a9fe]/", "cloud metadata"},
	{"http://[2002:a9fe:a9fe::1]/", "cloud metadata"},
	{"http://169.254.1.1/", "link-local"},
	{"http://[fd00:ec2::254]/", "unique-local"},
	{"http://[fc00::1]/", "unique-local"},
	{"http://[fe80::1]/", "link-local"},
	{"http://[fe80::1%25eth0]/", "scoped"},
	{"http://[fec0::1]/", "site-local"},
	{"http://224.0.0.1/", "multicast"},
	{"http://[ff02::1]/", "multicast"},
	{"http://240.0.0.1/", "reserved"},
	{"http://255.255.255.255/", "broadcast"},
	{"http://192.0.2.1/", "documentation"},
	{"http://198.51.100.1/", "documentation"},
	{"http://203.0.113.1/", "documentation"},
	{"http://[2001:db8::1]/", "documentation"},
	{"http://198.18.0.1/", "benchmarking"},
	{"http://192.0.0.1/", "reserved"},
	{"http://[::ffff:10.0.0.1]/", "private"},
	{"http://256.0.0.1/", "malformed"},
	{"http://meta.test/", "cloud metadata"},
	{"http://private.test/", "private"},
	{"http://mixed.test/", "private"},
	{"http://mixed6.test/", "unique-local"},
	{"http://cgnat.test/", "shared (CGNAT)"},
	{"http://ula.test/", "unique-local"},
	{"http://linklocal6.test/", "link-local"},
	{"http://nat64.test/", "cloud metadata"},
}

// TestRefusedTargets fetches every refused target directly and through a
// redirect from an allowed local server; nothing reaches the trap and the
// recording dialer is never asked for a non-loopback address.
func TestRefusedTargets(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer srv.Close()
	fx, g := newFixture(t, srv)
	tl := newFetchTool(t, FetchOptions{Guard: g, MaxRedirects: 5, Timeout: 5 * time.Second})
	if len(refusedTargets) < 60 {
		t.Fatalf("only %d refused targets", len(refusedTargets))
	}
	cases := 0
	for _, tt := range refusedTargets {
		target := strings.ReplaceAll(tt.url, ":P/", ":"+fx.trap.Port()+"/")
		for _, via := range []string{"direct", "redirect"} {
			u := target
			if via == "redirect" {
				u = srv.URL + "/?to=" + url.QueryEscape(target)
			}
			t.Run(via+" "+tt.url, func(t *testing.T) {
				cases++
				_, res := call(t, tl, fetchArgs(u), 65536)
				if res.Success {
					t.Fatalf("fetch %s succeeded:\n%s", u, res.Output)
				}
				if res.Error != tool.Failed && res.Error != tool.InvalidArguments {
					t.Errorf("error kind %q, want failed or invalid_arguments", res.Error)
				}
				if !strings.Contains(res.Output, tt.want) {
					t.Errorf("output %q does not contain %q", res.Output, tt.want)
				}
			})
		}
	}
	time.Sleep(100 * time.Millisecond) // let the trap's accept loop catch up
	if n := fx.trap.Accepted(); n != 0 {
		t.Errorf("trap accepted %d connections", n)
	}
	if len(fx.net.wild) != 0 {
		t.Errorf("dialer was asked for %v", fx.net.wild)
	}
	t.Logf("%d refused cases, %d served redirects", cases, served.Load())
}

// TestRedirectLimit: a chain one longer than web.max_redirects stops before
// the last target is requested; a chain exactly at the limit succeeds.
func TestRedirectLimit(t *testing.T) {
	var final atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/chain/%d", &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusMovedPermanently)
			return
		}
		final.Add(1)
		fmt.Fprint(w, "end of chain")
	}))
	defer srv.Close()
	_, g := newFixture(t, srv)
	tl := newFetchTool(t, FetchOptions{Guard: g, MaxRedirects: 3})

	_, res := call(t, tl, fetchArgs(srv.URL+"/chain/4"), 65536)
	if res.Success || !strings.Contains(res.Output, "stopped after 3 redirects (web.max_redirects); the next target was "+srv.URL+"/chain/0") {
		t.Errorf("over the limit: %+v", res)
	}
	if n := final.Load(); n != 0 {
		t.Errorf("final target requested %d times", n)
	}
	_, res = call(t, tl, fetchArgs(srv.URL+"/chain/3"), 65536)
	want := "URL: " + srv.URL + "/chain/0\nStatus: 200\nContent-Type: text/plain; charset=utf-8\nCharacters: 0-12 of 12\n\nend of chain"
	if !res.Success || res.Output != want {
		t.Errorf("at the limit: got %+v, want output %q", res, want)
	}
}
