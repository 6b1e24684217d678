// Package web owns the web tools: web_fetch (one public http/https page as
// text, through the netguard address guard) and web_search (SearXNG or the
// Brave Search API, whichever the user configured).
package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/version"
)

//go:embed fetch.md
var fetchDescription string

// Defaults used when an Options field is zero (the [web] keys of
// docs/configuration.md).
const (
	DefaultFetchMaxBytes = 2 << 20
	DefaultFetchTimeout  = 30 * time.Second
	DefaultOutputLimit   = 65536
)

// FetchOptions configures web_fetch.
type FetchOptions struct {
	// MaxBytes is web.fetch_max_bytes; zero means DefaultFetchMaxBytes.
	MaxBytes int64
	// Timeout is web.fetch_timeout_seconds for the whole call (connect,
	// redirects, body); zero means DefaultFetchTimeout.
	Timeout time.Duration
	// MaxRedirects is web.max_redirects; 0 follows none.
	MaxRedirects int
	// OutputLimit is the page size when the call's Env carries none
	// (tools.output_limit_bytes); zero means DefaultOutputLimit.
	OutputLimit int
	// AutoApprove is web.auto_approve_domains: "host" or "*.host".
	AutoApprove []string
	// Guard checks every address dialled; nil means a default guard
	// (public addresses only, system resolver).
	Guard *netguard.Guard
	// RootCAs replaces the system roots (tests with httptest TLS servers).
	RootCAs *x509.CertPool
}

// FetchParams is the input of web_fetch.
type FetchParams struct {
	URL    string `json:"url" jsonschema:"the http or https URL to fetch"`
	Offset int    `json:"offset,omitempty" jsonschema:"character offset of the part to return; use the offset a previous call named for the next part"`
}

type fetcher struct {
	opts     FetchOptions
	patterns []string
	client   *http.Client
	cache    *pageCache
}

// NewFetch builds the web_fetch tool.
func NewFetch(opts FetchOptions) (tool.Tool, error) {
	t, err := newFetch(opts)
	if err != nil {
		return nil, err
	}
	return tool.WithRiskClass(t, "network (read_only for allowlisted HTTPS hosts)"), nil
}

func newFetch(opts FetchOptions) (tool.Tool, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultFetchMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultFetchTimeout
	}
	if opts.MaxRedirects < 0 {
		return nil, fmt.Errorf("web.max_redirects is %d; it must be 0 or more", opts.MaxRedirects)
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = DefaultOutputLimit
	}
	if opts.Guard == nil {
		opts.Guard = netguard.New(netguard.Options{})
	}
	patterns, err := compilePatterns(opts.AutoApprove)
	if err != nil {
		return nil, err
	}
	f := &fetcher{opts: opts, patterns: patterns, client: newClient(opts), cache: newPageCache(4, 10*time.Minute)}
	return tool.Define("web_fetch", fetchDescription, func(s *jsonschema.Schema) {
		s.Properties["offset"].Minimum = jsonschema.Ptr(0.0)
	}, f.plan)
}

// newClient builds a client that never uses a proxy, a cookie jar or the
// client's own redirect handling (which would add a Referer), and dials only
// through the guard.
func newClient(opts FetchOptions) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           opts.Guard.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (f *fetcher) plan(env tool.Env, p FetchParams) (tool.Plan, error) {
	u, err := checkURL(p.URL)
	if err != nil {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "%v", err)
	}
	if err := f.opts.Guard.CheckHost(u.Hostname(), port(u)); err != nil {
		return tool.Plan{}, tool.Errorf(tool.Failed, "%v", err)
	}
	risk := tool.Network
	readOnly := f.autoApproved(u)
	if readOnly {
		risk = tool.ReadOnly
	}
	summary := "GET " + u.String()
	if p.Offset > 0 {
		summary += " (from character " + strconv.Itoa(p.Offset) + ")"
	}
	return tool.Plan{
		Risk:    risk,
		Summary: summary,
		Host:    grantHost(u),
		Run: func(ctx context.Context) tool.Result {
			return f.run(ctx, env, u, p.Offset, readOnly)
		},
	}, nil
}

// grantHost is the host a grant of a fetch of u names: the lower-case
// host name, with ":port" when the port is not the scheme's default (another
// port is another service).
func grantHost(u *url.URL) string {
	h := normalizeHost(u.Hostname())
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443" || u.Scheme == "http" && p == "80") {
		return h + ":" + p
	}
	return h
}

// checkURL accepts absolute http and https URLs without credentials.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("refused URL %q: only http and https URLs can be fetched", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("refused URL %s: URLs with embedded credentials are not fetched", u.Redacted())
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", raw)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func port(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

func (f *fetcher) run(ctx context.Context, env tool.Env, u *url.URL, offset int, readOnly bool) tool.Result {
	limit := env.OutputLimit
	if limit <= 0 {
		limit = f.opts.OutputLimit
	}
	key := u.String()
	if offset > 0 {
		if pg, ok := f.cache.get(key); ok {
			return pg.render(offset, limit)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	pg, fail := f.fetch(tctx, u, readOnly)
	if fail != nil {
		if ctx.Err() != nil {
			return tool.Fail(tool.Cancelled, "web_fetch %s: cancelled", u)
		}
		return *fail
	}
	if pg.status < 400 {
		// The model may page on with the URL it asked for or with the
		// final URL the result shows.
		f.cache.put(key, pg)
		if pg.url != key {
			f.cache.put(pg.url, pg)
		}
	}
	return pg.render(offset, limit)
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// fetch follows redirects itself so that every hop is a fresh GET carrying
// only our headers, and every target is checked before it is requested.
func (f *fetcher) fetch(ctx context.Context, u *url.URL, readOnly bool) (*page, *tool.Result) {
	cur := u
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cur.String(), nil)
		if err != nil {
			return nil, failf(tool.InvalidArguments, "request %s: %v", cur, err)
		}
		req.Header.Set("User-Agent", version.UserAgent())
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5")
		resp, err := f.client.Do(req)
		if err != nil {
			return nil, f.transportFailure(ctx, cur, err)
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			return f.read(ctx, cur, resp)
		}
		resp.Body.Close()
		next, err := cur.Parse(loc)
		if err != nil {
			return nil, failf(tool.Failed, "%s redirected to an invalid location %q", cur, loc)
		}
		if hop >= f.opts.MaxRedirects {
			return nil, failf(tool.Failed, "stopped after %d redirects (web.max_redirects); the next target was %s", f.opts.MaxRedirects, next)
		}
		if next, err = checkURL(next.String()); err != nil {
			return nil, failf(tool.Failed, "%s redirected: %v", cur, err)
		}
		if readOnly && !f.autoApproved(next) {
			return nil, failf(tool.Failed, "%s redirected to %s, which is not an auto-approved HTTPS host; call web_fetch with that URL to fetch it (it needs approval)", cur, next)
		}
		if err := f.opts.Guard.CheckHost(next.Hostname(), port(next)); err != nil {
			return nil, failf(tool.Failed, "%s redirected to %s: %v", cur, next, err)
		}
		cur = next
	}
}

func (f *fetcher) transportFailure(ctx context.Context, u *url.URL, err error) *tool.Result {
	var refused *netguard.RefusedError
	switch {
	case errors.As(err, &refused):
		return failf(tool.Failed, "fetch %s: %v", u, refused)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return failf(tool.Failed, "fetch %s: timed out after %s (web.fetch_timeout_seconds)", u, f.opts.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return failf(tool.Failed, "fetch %s: timed out: %v", u, err)
	}
	return failf(tool.Failed, "fetch %s: %v", u, err)
}

func failf(kind tool.ErrorKind, format string, args ...any) *tool.Result {
	r := tool.Fail(kind, format, args...)
	return &r
}
