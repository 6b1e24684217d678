package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestFetchResultsFitTheLimit: pages, error pages, long URLs, refusals
// naming a long URL and paging fit the output limit as they are, at
// every limit down to a few bytes; a page never comes back without the
// part of its text that fits, unless the limit leaves no room for any.
func TestFetchResultsFitTheLimit(t *testing.T) {
	body := strings.Repeat("line of text é 🚀\n", 5000)
	srv, tl := serve(t, FetchOptions{MaxBytes: 50000}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(404)
		case "/bin":
			w.Header().Set("Content-Type", "image/png")
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.Write([]byte(body))
	})
	longQuery := "?q=" + strings.Repeat("x", 20000)
	urls := []string{srv.URL + "/page", srv.URL + "/missing", srv.URL + "/bin", srv.URL + "/page" + longQuery,
		"ftp://example.com/" + strings.Repeat("y", 20000), srv.URL + "/page#" + strings.Repeat("z", 5000)}
	for _, limit := range []int{16, 100, 300, 2000, 65536} {
		for i, u := range urls {
			for _, offset := range []int{0, 1000} {
				_, res := call(t, tl, map[string]any{"url": u, "offset": offset}, limit)
				testutil.Fits(t, fmt.Sprintf("url %d offset %d limit %d", i, offset, limit), res, limit)
			}
		}
	}
}

// TestSearchResultsFitTheLimit: a result list too long for the limit
// drops its last results (and then shortens the echoed query), says it is
// truncated and stays valid JSON.
func TestSearchResultsFitTheLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var hits []map[string]string
		for i := range 8 {
			hits = append(hits, map[string]string{"title": fmt.Sprintf("hit %d \x01\x02", i),
				"url": fmt.Sprintf("https://r%d.example/%s", i, strings.Repeat("p", 3000)), "content": strings.Repeat("\x01", 500)})
		}
		json.NewEncoder(w).Encode(map[string]any{"results": hits})
	}))
	t.Cleanup(srv.Close)
	tl := newSearch(t, SearchOptions{Backend: "searxng", SearXNGURL: srv.URL})
	for _, limit := range []int{16, 100, 500, 4000, 65536} {
		for _, q := range []string{"go", strings.Repeat("\x01", 3000)} {
			_, res := call(t, tl, map[string]any{"query": q}, limit)
			testutil.Fits(t, fmt.Sprintf("limit %d", limit), res, limit)
			if res.JSON && limit < 30000 && !strings.Contains(res.Output, `"truncated":true`) {
				t.Errorf("limit %d: a shortened list must say so: %.200s", limit, res.Output)
			}
		}
	}
}
