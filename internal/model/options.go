package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Wire API names of a provider profile.
const (
	WireResponses = "responses"
	WireChat      = "chat"
	WireAnthropic = "anthropic"
)

// Limits are the [provider_limits] caps. A zero field takes the default.
// MaxResponseBytes counts content (answer, reasoning and argument bytes as
// decoded), not framing; the bytes read from the body are bounded by
// FramingAllowance times it (see docs/model.md).
type Limits struct {
	MaxSSEEventBytes      int
	MaxResponseBytes      int
	MaxAssistantBytes     int
	MaxToolCalls          int
	MaxToolArgumentsBytes int
}

// DefaultLimits are the [provider_limits] defaults.
var DefaultLimits = Limits{
	MaxSSEEventBytes:      1 << 20,
	MaxResponseBytes:      4 << 20,
	MaxAssistantBytes:     1 << 20,
	MaxToolCalls:          32,
	MaxToolArgumentsBytes: 256 << 10,
}

// Options configure a provider client. Nothing is read from the process
// environment: the caller resolves the key from the profile's api_key_env.
type Options struct {
	// WireAPI is "responses" (default), "chat" or "anthropic".
	WireAPI string
	// BaseURL is the endpoint root, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent only to BaseURL: as a bearer token, or as x-api-key
	// on the Anthropic wire.
	APIKey string
	// KeySource says where APIKey came from, for the error of a refused
	// key: "OPENAI_API_KEY (providers.openai.api_key_env)". Never the key.
	KeySource string
	// Headers are extra request headers; their values are treated as secrets.
	Headers map[string]string
	// Model is the default model; Request.Model overrides it.
	Model string
	// ReasoningEffort is the default effort; Request.ReasoningEffort overrides it.
	ReasoningEffort string
	// Timeout bounds one attempt, stream included (0: 600 s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt (< 0: none).
	MaxRetries int
	Limits     Limits
	// HTTPClient is copied; redirects are always refused (see docs/model.md).
	HTTPClient *http.Client
	// Sleep waits between retries (default: a timer that honours ctx).
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
}

// New returns the client for opts.WireAPI.
func New(opts Options) (Client, error) {
	c, err := newCore(opts)
	if err != nil {
		return nil, err
	}
	switch opts.WireAPI {
	case "", WireResponses:
		return &responsesClient{c}, nil
	case WireChat:
		return &chatClient{c}, nil
	case WireAnthropic:
		if _, err := thinkingBudget(opts.ReasoningEffort); err != nil {
			return nil, err
		}
		c.anthropic = true
		return &anthropicClient{c}, nil
	default:
		return nil, fmt.Errorf("model: unknown wire_api %q: use \"responses\", \"chat\" or \"anthropic\"", opts.WireAPI)
	}
}

// core is what the wire clients share: endpoint, secrets, limits, retries.
type core struct {
	// anthropic selects x-api-key and anthropic-version instead of a
	// bearer token.
	anthropic bool
	base      *url.URL
	opts      Options
	limits    Limits
	http      *http.Client
	sleep     func(context.Context, time.Duration) error
	log       *slog.Logger
	secrets   []string
}

func newCore(opts Options) (*core, error) {
	if opts.BaseURL == "" {
		return nil, errors.New("model: base_url is empty: set providers.<name>.base_url")
	}
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: base_url %q is not an http(s) URL", opts.BaseURL)
	}
	for k, v := range opts.Headers {
		if strings.ContainsAny(k+v, "\r\n") || k == "" {
			return nil, fmt.Errorf("model: header %q is invalid", k)
		}
	}
	c := &core{base: u, opts: opts, limits: withDefaults(opts.Limits), sleep: opts.Sleep, log: opts.Logger}
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = 600 * time.Second
	}
	if c.opts.MaxRetries < 0 {
		c.opts.MaxRetries = 0
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.http = httpClient(opts.HTTPClient)
	c.secrets = secretsOf(opts)
	return c, nil
}

func withDefaults(l Limits) Limits {
	pick := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	d := DefaultLimits
	return Limits{
		MaxSSEEventBytes:      pick(l.MaxSSEEventBytes, d.MaxSSEEventBytes),
		MaxResponseBytes:      pick(l.MaxResponseBytes, d.MaxResponseBytes),
		MaxAssistantBytes:     pick(l.MaxAssistantBytes, d.MaxAssistantBytes),
		MaxToolCalls:          pick(l.MaxToolCalls, d.MaxToolCalls),
		MaxToolArgumentsBytes: pick(l.MaxToolArgumentsBytes, d.MaxToolArgumentsBytes),
	}
}

// errRedirect refuses every redirect so the key and secret headers reach
// only BaseURL.
var errRedirect = errors.New("redirects are refused so the API key reaches only base_url")

func httpClient(given *http.Client) *http.Client {
	var c http.Client
	if given != nil {
		c = *given
	} else {
		c.Transport = sharedTransport()
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	return &c
}

// sharedTransport is the one connection pool of every model client in
// the process. A client is made per session, and a pool per client kept
// each closed session's idle connection (two goroutines and their
// buffers) for IdleConnTimeout: after a burst of 200 sessions, 5 MB of
// the daemon's memory. One pool also reuses connections (and TLS
// sessions) across sessions of the same endpoint. It carries no
// credentials: keys and headers are set on each request.
// (A function, not a sync.OnceValue variable: package initialisation of
// every scv process would pay for the closure.)
func sharedTransport() *http.Transport {
	transportOnce.Do(func() {
		transport = &http.Transport{
			// No Proxy: nothing comes from the process environment.
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          10,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	})
	return transport
}

var (
	transportOnce sync.Once
	transport     *http.Transport
)

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
