package web

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/version"
)

//go:embed search.md
var searchDescription string

// DefaultBraveURL is the Brave Search API web endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// Search defaults (the [web] keys of docs/configuration.md).
const (
	DefaultMaxSearchResults = 8
	DefaultSearchTimeout    = 30 * time.Second
	maxSearchResponseBytes  = 4 << 20
)

// SearchOptions configures web_search. The backend is the user's own
// configured endpoint (possibly a SearXNG on localhost), so it is reached
// with a plain client: the address guard of web_fetch does not apply here.
type SearchOptions struct {
	// Backend is "searxng" or "brave" (web.search).
	Backend string
	// SearXNGURL is web.searxng_url, the base URL of the instance.
	SearXNGURL string
	// BraveURL is web.brave_url; empty means DefaultBraveURL.
	BraveURL string
	// BraveKey is the Brave Search API key (web.brave_api_key or the
	// variable web.brave_api_key_env names). It is sent only to BraveURL.
	BraveKey string
	// MaxResults is web.max_search_results; zero means the default 8.
	MaxResults int
	// Timeout bounds one search; zero means 30 s.
	Timeout time.Duration
	// Client replaces the HTTP client (tests).
	Client *http.Client
}

// SearchParams is the input of web_search.
type SearchParams struct {
	Query string `json:"query" jsonschema:"the search query"`
	Count int    `json:"count,omitempty" jsonschema:"how many results to return"`
}

// SearchResult is one hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

type searchOutput struct {
	Query   string         `json:"query"`
	Results []SearchResult `json:"results"`
	// Truncated says results were left out (or the query shortened) to
	// fit tools.output_limit_bytes.
	Truncated bool `json:"truncated,omitempty"`
}

type searcher struct {
	opts     SearchOptions
	endpoint *url.URL
}

// NewSearch builds the web_search tool. A missing endpoint or key is an
// error naming the configuration key.
func NewSearch(opts SearchOptions) (tool.Tool, error) {
	t, err := newSearchTool(opts)
	if err != nil {
		return nil, err
	}
	return tool.WithRiskClass(t, "read_only"), nil
}

func newSearchTool(opts SearchOptions) (tool.Tool, error) {
	if opts.MaxResults <= 0 {
		opts.MaxResults = DefaultMaxSearchResults
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultSearchTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	var raw string
	switch opts.Backend {
	case "searxng":
		if strings.TrimSpace(opts.SearXNGURL) == "" {
			return nil, errors.New(`web.search is "searxng" but web.searxng_url is not set; set it to your SearXNG base URL`)
		}
		raw = strings.TrimRight(strings.TrimSpace(opts.SearXNGURL), "/") + "/search"
	case "brave":
		if strings.TrimSpace(opts.BraveKey) == "" {
			return nil, errors.New(`web.search is "brave" but no key is set; set web.brave_api_key or the variable named by web.brave_api_key_env`)
		}
		raw = opts.BraveURL
		if raw == "" {
			raw = DefaultBraveURL
		}
	default:
		return nil, fmt.Errorf("web.search %q has no web_search tool; use searxng or brave", opts.Backend)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		key := "web.searxng_url"
		if opts.Backend == "brave" {
			key = "web.brave_url"
		}
		return nil, fmt.Errorf("%s %q is not an http(s) URL", key, raw)
	}
	s := &searcher{opts: opts, endpoint: u}
	return tool.Define("web_search", searchDescription, func(sc *jsonschema.Schema) {
		sc.Properties["count"].Minimum = jsonschema.Ptr(1.0)
		sc.Properties["count"].Maximum = jsonschema.Ptr(float64(opts.MaxResults))
		sc.Properties["count"].Default = json.RawMessage(strconv.Itoa(opts.MaxResults))
		sc.Properties["query"].MinLength = jsonschema.Ptr(1)
	}, s.plan)
}

func (s *searcher) plan(env tool.Env, p SearchParams) (tool.Plan, error) {
	q := strings.TrimSpace(p.Query)
	if q == "" {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "query is empty")
	}
	count := p.Count
	if count <= 0 {
		count = s.opts.MaxResults
	}
	return tool.Plan{
		Risk:    tool.ReadOnly,
		Summary: fmt.Sprintf("search (%s): %s", s.opts.Backend, q),
		Run:     func(ctx context.Context) tool.Result { return fitSearch(s.run(ctx, q, count), env.OutputLimit) },
	}, nil
}

func (s *searcher) run(ctx context.Context, q string, count int) tool.Result {
	tctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	u := *s.endpoint
	v := u.Query()
	v.Set("q", q)
	if s.opts.Backend == "searxng" {
		v.Set("format", "json")
	} else {
		v.Set("count", strconv.Itoa(min(count, 20)))
	}
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Fail(tool.Failed, "web_search: %v", err)
	}
	req.Header.Set("User-Agent", version.UserAgent())
	req.Header.Set("Accept", "application/json")
	if s.opts.Backend == "brave" {
		req.Header.Set("X-Subscription-Token", s.opts.BraveKey)
	}
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Fail(tool.Cancelled, "web_search: cancelled")
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			return tool.Fail(tool.Unavailable, "web_search: %s did not answer within %s", s.name(), s.opts.Timeout)
		}
		return tool.Fail(tool.Unavailable, "web_search: %s is unreachable: %v; %s", s.name(), stripURLError(err), s.unreachableHint())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchResponseBytes))
	if err != nil {
		if errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return tool.Fail(tool.Unavailable, "web_search: %s did not answer within %s", s.name(), s.opts.Timeout)
		}
		return tool.Fail(tool.Unavailable, "web_search: reading the %s response: %v", s.name(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return tool.Fail(tool.Failed, "web_search: %s answered HTTP %d%s", s.name(), resp.StatusCode, s.statusHint(resp.StatusCode, body))
	}
	results, err := s.parse(body)
	if err != nil {
		return tool.Fail(tool.Failed, "web_search: %s answered with something that is not its JSON result format (%v); check %s", s.name(), err, s.urlKey())
	}
	if len(results) > count {
		results = results[:count]
	}
	return tool.JSONResult(true, "", searchOutput{Query: q, Results: results}, false)
}

// fitSearch keeps a result list within limit (0: none) after encoding:
// the last results are left out first, then the echoed query is
// shortened; "truncated" says so.
func fitSearch(res tool.Result, limit int) tool.Result {
	if !res.Success || limit <= 0 || len(res.Output) <= limit {
		return res
	}
	var out searchOutput
	if err := json.Unmarshal([]byte(res.Output), &out); err != nil {
		return res
	}
	out.Truncated = true
	for len(out.Results) > 0 {
		out.Results = out.Results[:len(out.Results)-1]
		if enc, err := tool.EncodeJSON(out); err == nil && len(enc) <= limit {
			return tool.JSONWithin(true, "", out, true, limit)
		}
	}
	q := out.Query
	out.Query = ""
	fixed, err := tool.EncodeJSON(out)
	if err != nil {
		return tool.Fail(tool.Failed, "encode result: %v", err)
	}
	if budget := limit - len(fixed) - len("…"); budget >= 0 {
		out.Query = tool.FitJSON(q, budget) + "…"
	}
	return tool.JSONWithin(true, "", out, true, limit)
}

func (s *searcher) name() string {
	if s.opts.Backend == "brave" {
		return "the Brave Search API"
	}
	return "SearXNG at " + s.endpoint.Scheme + "://" + s.endpoint.Host
}

func (s *searcher) urlKey() string {
	if s.opts.Backend == "brave" {
		return "web.brave_url"
	}
	return "web.searxng_url (the base URL of the instance, without /search)"
}

func (s *searcher) unreachableHint() string {
	if s.opts.Backend == "brave" {
		return "check the network and web.brave_url"
	}
	return "check that SearXNG is running and that web.searxng_url points at it"
}

// statusHint explains the common setup errors.
func (s *searcher) statusHint(code int, body []byte) string {
	if s.opts.Backend == "searxng" {
		switch code {
		case http.StatusForbidden:
			return `: the JSON format is not enabled; add "json" to search.formats in SearXNG's settings.yml and restart it`
		case http.StatusNotFound:
			return "; check " + s.urlKey()
		case http.StatusTooManyRequests:
			return ": SearXNG's limiter refused the request; disable server.limiter for this private instance or allow SCV's address"
		}
	} else {
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity:
			return ": the API key was refused; check web.brave_api_key (or the variable named by web.brave_api_key_env) and the key's subscription"
		case http.StatusTooManyRequests:
			return ": the rate limit or monthly quota of the key was reached; try again later"
		}
	}
	if msg := strings.TrimSpace(string(body)); msg != "" {
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return ": " + strings.ToValidUTF8(msg, "")
	}
	return ""
}

func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// stripTags removes every "<...>" (what `<[^>]*>` matches); a '<' without
// a later '>' stays.
func stripTags(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// maxSnippetRunes bounds one title or snippet so a result list stays small.
const maxSnippetRunes = 600

// cleanSnippet removes the markup Brave puts in descriptions, collapses
// white space and bounds the length.
func cleanSnippet(s string) string {
	s = strings.Join(strings.Fields(html.UnescapeString(stripTags(s))), " ")
	if r := []rune(s); len(r) > maxSnippetRunes {
		s = string(r[:maxSnippetRunes]) + "…"
	}
	return s
}

func (s *searcher) parse(body []byte) ([]SearchResult, error) {
	var out []SearchResult
	if s.opts.Backend == "searxng" {
		var r struct {
			Results []struct {
				Title   string `json:"title"`
				URL     string `json:"url"`
				Content string `json:"content"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		for _, h := range r.Results {
			out = append(out, SearchResult{Title: cleanSnippet(h.Title), URL: h.URL, Snippet: cleanSnippet(h.Content)})
		}
		return out, nil
	}
	var r struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	for _, h := range r.Web.Results {
		out = append(out, SearchResult{Title: cleanSnippet(h.Title), URL: h.URL, Snippet: cleanSnippet(h.Description)})
	}
	return out, nil
}
