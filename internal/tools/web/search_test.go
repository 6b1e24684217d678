package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/version"
)

const braveKey = "BSA-test-key-123"

// fakeSearXNG answers /search?format=json with n numbered results.
func fakeSearXNG(t *testing.T, n int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.Header.Get("User-Agent") != version.UserAgent() {
			t.Errorf("unexpected request %s UA %q", r.URL, r.Header.Get("User-Agent"))
			w.WriteHeader(400)
			return
		}
		var hits []map[string]string
		for i := 1; i <= n; i++ {
			hits = append(hits, map[string]string{"title": fmt.Sprintf("%s %d", r.URL.Query().Get("q"), i),
				"url": fmt.Sprintf("https://r%d.example/", i), "content": fmt.Sprintf("snippet &amp; %d", i), "engine": "x"})
		}
		json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": hits, "answers": []string{}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeBrave answers like the Brave web search endpoint.
func fakeBrave(t *testing.T, n int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`))
			return
		}
		count := n
		fmt.Sscan(r.URL.Query().Get("count"), &count)
		var hits []map[string]string
		for i := 1; i <= min(n, count); i++ {
			hits = append(hits, map[string]string{"title": fmt.Sprintf("<strong>%s</strong> %d", r.URL.Query().Get("q"), i),
				"url": fmt.Sprintf("https://b%d.example/", i), "description": fmt.Sprintf("about <strong>it</strong> %d", i)})
		}
		json.NewEncoder(w).Encode(map[string]any{"type": "search", "web": map[string]any{"results": hits}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newSearch(t *testing.T, opts SearchOptions) tool.Tool {
	t.Helper()
	tl, err := NewSearch(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func results(prefix, q, snippet string, n int) string {
	var rs []SearchResult
	for i := 1; i <= n; i++ {
		rs = append(rs, SearchResult{Title: fmt.Sprintf("%s %d", q, i), URL: fmt.Sprintf("https://%s%d.example/", prefix, i), Snippet: fmt.Sprintf(snippet, i)})
	}
	out, _ := tool.EncodeJSON(searchOutput{Query: q, Results: rs})
	return out
}

func TestSearchResults(t *testing.T) {
	sx := fakeSearXNG(t, 12)
	br := fakeBrave(t, 12)
	tests := []struct {
		name  string
		opts  SearchOptions
		args  map[string]any
		want  string
		wantN int
	}{
		{"searxng count", SearchOptions{Backend: "searxng", SearXNGURL: sx.URL + "/"}, map[string]any{"query": "tokio", "count": 3}, results("r", "tokio", "snippet & %d", 3), 3},
		{"searxng default count", SearchOptions{Backend: "searxng", SearXNGURL: sx.URL}, map[string]any{"query": "tokio"}, results("r", "tokio", "snippet & %d", 8), 8},
		{"searxng max 5", SearchOptions{Backend: "searxng", SearXNGURL: sx.URL, MaxResults: 5}, map[string]any{"query": "go"}, results("r", "go", "snippet & %d", 5), 5},
		{"brave count", SearchOptions{Backend: "brave", BraveURL: br.URL + "/res/v1/web/search", BraveKey: braveKey}, map[string]any{"query": "serde", "count": 2}, results("b", "serde", "about it %d", 2), 2},
		{"brave default", SearchOptions{Backend: "brave", BraveURL: br.URL, BraveKey: braveKey}, map[string]any{"query": "serde"}, results("b", "serde", "about it %d", 8), 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newSearch(t, tt.opts)
			p, res := call(t, tl, tt.args, 65536)
			if p.Risk != tool.ReadOnly {
				t.Errorf("risk %q", p.Risk)
			}
			want := tool.Result{Success: true, JSON: true, Output: tt.want}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchCountAboveMaximum(t *testing.T) {
	sx := fakeSearXNG(t, 3)
	tl := newSearch(t, SearchOptions{Backend: "searxng", SearXNGURL: sx.URL, MaxResults: 8})
	_, res := call(t, tl, map[string]any{"query": "x", "count": 9}, 65536)
	if res.Error != tool.InvalidArguments || !strings.Contains(res.Output, "maximum 8") {
		t.Errorf("result %+v", res)
	}
	var schema struct {
		Properties map[string]struct{ Maximum float64 } `json:"properties"`
	}
	json.Unmarshal(tl.Schema(), &schema)
	if schema.Properties["count"].Maximum != 8 {
		t.Errorf("schema maximum %v", schema.Properties["count"].Maximum)
	}
}

func TestSearchFailures(t *testing.T) {
	status := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	br := fakeBrave(t, 3)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	tests := []struct {
		name string
		opts SearchOptions
		kind tool.ErrorKind
		want string
	}{
		{"searxng 403", SearchOptions{Backend: "searxng", SearXNGURL: status(403, "Forbidden")}, tool.Failed, `HTTP 403: the JSON format is not enabled; add "json" to search.formats in SearXNG's settings.yml`},
		{"searxng 404", SearchOptions{Backend: "searxng", SearXNGURL: status(404, "")}, tool.Failed, "HTTP 404; check web.searxng_url"},
		{"searxng 429", SearchOptions{Backend: "searxng", SearXNGURL: status(429, "")}, tool.Failed, "limiter"},
		{"searxng 500 body", SearchOptions{Backend: "searxng", SearXNGURL: status(500, "engine crashed")}, tool.Failed, "HTTP 500: engine crashed"},
		{"searxng html", SearchOptions{Backend: "searxng", SearXNGURL: status(200, "<html>")}, tool.Failed, "not its JSON result format"},
		{"searxng down", SearchOptions{Backend: "searxng", SearXNGURL: "http://127.0.0.1:1"}, tool.Unavailable, "check that SearXNG is running"},
		{"searxng timeout", SearchOptions{Backend: "searxng", SearXNGURL: slow.URL, Timeout: 200 * time.Millisecond}, tool.Unavailable, "did not answer within 200ms"},
		{"brave wrong key", SearchOptions{Backend: "brave", BraveURL: br.URL, BraveKey: "wrong"}, tool.Failed, "HTTP 401: the API key was refused; check web.brave_api_key"},
		{"brave 403", SearchOptions{Backend: "brave", BraveURL: status(403, ""), BraveKey: braveKey}, tool.Failed, "HTTP 403: the API key was refused"},
		{"brave 422", SearchOptions{Backend: "brave", BraveURL: status(422, `{"error":"x"}`), BraveKey: braveKey}, tool.Failed, "HTTP 422: the API key was refused"},
		{"brave 429", SearchOptions{Backend: "brave", BraveURL: status(429, ""), BraveKey: braveKey}, tool.Failed, "quota"},
		{"brave timeout", SearchOptions{Backend: "brave", BraveURL: slow.URL, BraveKey: braveKey, Timeout: 200 * time.Millisecond}, tool.Unavailable, "did not answer within 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res := call(t, newSearch(t, tt.opts), map[string]any{"query": "q"}, 65536)
			if res.Success || res.Error != tt.kind || !strings.Contains(res.Output, tt.want) {
				t.Errorf("got %+v; want %s containing %q", res, tt.kind, tt.want)
			}
			if strings.Contains(res.Output, braveKey) {
				t.Errorf("key leaked: %q", res.Output)
			}
		})
	}
}

func TestNewSearchErrors(t *testing.T) {
	tests := []struct {
		opts SearchOptions
		want string
	}{
		{SearchOptions{Backend: "searxng"}, "web.searxng_url"},
		{SearchOptions{Backend: "searxng", SearXNGURL: "localhost:8080"}, "web.searxng_url"},
		{SearchOptions{Backend: "brave"}, "web.brave_api_key"},
		{SearchOptions{Backend: "brave", BraveKey: "k", BraveURL: "ftp://x"}, "web.brave_url"},
		{SearchOptions{Backend: "provider"}, "web.search"},
	}
	for _, tt := range tests {
		_, err := NewSearch(tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSearch(%+v) = %v; want an error naming %s", tt.opts, err, tt.want)
		}
	}
}
