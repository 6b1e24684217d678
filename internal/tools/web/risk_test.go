package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tool"
)

// TestRisk decides risk and summary from the URL alone (nothing is
// fetched: Plan does no network I/O).
func TestRisk(t *testing.T) {
	tl := newFetchTool(t, FetchOptions{AutoApprove: []string{"docs.rs", "*.Python.org.", "pkg.go.dev."}})
	tests := []struct {
		url  string
		risk tool.Risk
	}{
		{"https://docs.rs/serde/latest/serde/", tool.ReadOnly},
		{"https://DOCS.RS/serde", tool.ReadOnly},
		{"https://docs.rs./serde", tool.ReadOnly},
		{"https://docs.rs:443/x", tool.ReadOnly},
		{"https://docs.rs:8443/x", tool.Network},
		{"https://pkg.go.dev:80/x", tool.Network},
		{"http://docs.rs/serde", tool.Network},
		{"https://evil.docs.rs/", tool.Network},
		{"https://docs.rs.evil.com/", tool.Network},
		{"https://notdocs.rs/", tool.Network},
		{"https://docs.python.org/3/", tool.ReadOnly},
		{"https://a.b.python.org/", tool.ReadOnly},
		{"https://python.org/", tool.Network},
		{"https://evilpython.org/", tool.Network},
		{"https://pkg.go.dev/net/http", tool.ReadOnly},
		{"https://example.com/?q=secret", tool.Network},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			raw := []byte(`{"url":"` + tt.url + `"}`)
			p, err := tl.Plan(tool.Env{}, raw)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(tt.url)
			if p.Risk != tt.risk || p.Summary != "GET "+u.String() {
				t.Errorf("risk %q summary %q; want %q and the full URL", p.Risk, p.Summary, tt.risk)
			}
		})
	}
}

// TestAutoApprovedRedirects runs an HTTPS server whose certificate covers
// example.com names, reached as the default port 443: a read-only fetch may
// be redirected only to another listed HTTPS host on the default port; an
// approved (network) fetch may follow any redirect.
func TestAutoApprovedRedirects(t *testing.T) {
	srv, pool := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Write([]byte("landed on " + r.Host))
	}))
	_, g := newFixtureOn443(t, srv)
	tl := newFetchTool(t, FetchOptions{Guard: g, RootCAs: pool, MaxRedirects: 3, AutoApprove: []string{"docs.example.com", "*.api.example.com"}})
	port := portOf(srv)
	start := "https://docs.example.com/?to="
	tests := []struct {
		name, to string
		ok       bool
		want     string
	}{
		{"listed host", "https://v1.api.example.com/", true, "landed on v1.api.example.com"},
		{"same host", "/page", true, "landed on docs.example.com"},
		{"off-list host", "https://other.example.org/leak?d=1", false,
			"redirected to https://other.example.org/leak?d=1, which is not an auto-approved HTTPS host"},
		{"apex of a *. pattern", "https://api.example.com/", false, "redirected to https://api.example.com/, which is not"},
		{"listed host over http", "http://docs.example.com/", false, "redirected to http://docs.example.com/, which is not"},
		{"listed host on another port", "https://docs.example.com:" + port + "/", false, "redirected to https://docs.example.com:" + port + "/, which is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, res := call(t, tl, fetchArgs(start+url.QueryEscape(tt.to)), 65536)
			if p.Risk != tool.ReadOnly && p.Run != nil {
				t.Fatalf("risk %q", p.Risk)
			}
			if res.Success != tt.ok || !strings.Contains(res.Output, tt.want) {
				t.Errorf("got %+v; want success=%v containing %q", res, tt.ok, tt.want)
			}
		})
	}
	// The same off-list redirect is followed when the call needed approval.
	p, res := call(t, tl, fetchArgs("https://other.example.org/?to="+url.QueryEscape("https://docs.example.com/")), 65536)
	if diff := cmp.Diff([]any{tool.Network, true}, []any{p.Risk, res.Success}); diff != "" || !strings.Contains(res.Output, "landed on docs.example.com") {
		t.Errorf("approved fetch: %s %+v", diff, res)
	}
}
