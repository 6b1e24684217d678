package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/version"
)

func TestHTMLGolden(t *testing.T) {
	for _, name := range []string{"docs", "article", "table", "links"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := htmlToText(in, "https://docs.example.com/guide/"+name+".html")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if testutil.Update() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// serve starts a local server answering each path with a fixed content
// type and body, and returns a fetch tool allowed to reach it.
func serve(t *testing.T, opts FetchOptions, h http.HandlerFunc) (*httptest.Server, tool.Tool) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, g := newFixture(t, srv)
	opts.Guard = g
	return srv, newFetchTool(t, opts)
}

func TestFetchContentTypes(t *testing.T) {
	latin1 := []byte("caf\xe9 cr\xe8me")
	tests := []struct {
		name, ctype string
		body        []byte
		wantType    string
		wantText    string
	}{
		{"html", "text/html; charset=utf-8", []byte(`<html><body><h1>Title</h1><p>Hello <a href="/x">there</a>.</p></body></html>`),
			"text/html; charset=utf-8", "# Title\n\nHello there[1].\n\nReferences:\n[1] SRV/x"},
		{"json", "application/json", []byte(`{"name":"serde","versions":[1,2]}`), "application/json", `{"name":"serde","versions":[1,2]}`},
		{"problem json", "application/problem+json", []byte(`{"title":"x"}`), "application/problem+json", `{"title":"x"}`},
		{"plain", "text/plain", []byte("line 1\n  line 2\n"), "text/plain", "line 1\n  line 2\n"},
		{"markdown", "text/markdown; charset=UTF-8", []byte("# Readme\n"), "text/markdown; charset=UTF-8", "# Readme\n"},
		{"latin1", "text/plain; charset=iso-8859-1", latin1, "text/plain; charset=iso-8859-1", "café crème"},
		{"sniffed html", "", []byte("<!DOCTYPE html><html><body><p>no header</p></body></html>"), "unknown", "no header"},
		{"sniffed text", "", []byte("just text"), "unknown", "just text"},
		{"unfamiliar text type", "application/x-custom", []byte("key = value"), "application/x-custom", "key = value"},
		{"empty", "text/plain", nil, "text/plain", "[the response body is empty]"},
		{"script shell", "text/html", []byte(`<html><body><div id="app"></div><script src="/app.js"></script></body></html>`), "text/html",
			"[This page has almost no text without JavaScript (0 visible characters, 1 scripts); it is probably rendered in the browser. Try the site's API, a raw or documentation source, or web_search.]"},
		{"loading shell", "text/html", []byte(`<html><head><script>var a=1</script></head><body><p>Loading…</p><script src="/app.js"></script></body></html>`), "text/html",
			"Loading…\n\n[This page has almost no text without JavaScript (8 visible characters, 2 scripts); it is probably rendered in the browser. Try the site's API, a raw or documentation source, or web_search.]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.Write(tt.body)
			})
			_, res := call(t, tl, fetchArgs(srv.URL+"/page"), 65536)
			text := strings.ReplaceAll(tt.wantText, "SRV", srv.URL)
			want := tool.Result{Success: true, Output: fmt.Sprintf("URL: %s/page\nStatus: 200\nContent-Type: %s\nCharacters: 0-%d of %d\n\n%s",
				srv.URL, tt.wantType, utf8.RuneCountInString(text), utf8.RuneCountInString(text), text)}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNULBodyRefused: a body declared as text (HTML, plain, JSON) that
// holds NUL bytes is binary and refused; UTF-16 text, which holds NUL bytes
// until it is decoded, is not.
func TestNULBodyRefused(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	tests := []struct {
		name, ctype string
		body        []byte
		ok          bool
	}{
		{"html that is an image", "text/html", png, false},
		{"html with one NUL", "text/html; charset=utf-8", []byte("<p>a\x00b</p>"), false},
		{"plain with a NUL", "text/plain", []byte("abc\x00def"), false},
		{"json with a NUL", "application/json", []byte("{\"a\":\"\x00\"}"), false},
		{"utf-16 text", "text/plain; charset=utf-16le", []byte("h\x00i\x00"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.Write(tt.body)
			})
			_, res := call(t, tl, fetchArgs(srv.URL+"/x"), 65536)
			if res.Success != tt.ok || !tt.ok && !strings.Contains(res.Output, "NUL byte") || strings.ContainsRune(res.Output, 0) {
				t.Errorf("%+v", res)
			}
		})
	}
}

// TestBinaryRefusedBeforeBody: the handler sends headers, flushes, then
// tries to stream 256 MiB; the client must close the connection instead of
// reading, so the server's writes fail early.
func TestBinaryRefusedBeforeBody(t *testing.T) {
	types := []string{"image/png", "image/svg+xml", "audio/mpeg", "video/mp4", "application/pdf", "application/zip",
		"application/gzip", "application/x-tar", "application/octet-stream", "application/x-7z-compressed",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "font/woff2", "APPLICATION/PDF; name=x.pdf"}
	for _, ct := range types {
		t.Run(ct, func(t *testing.T) {
			var written atomic.Int64
			done := make(chan error, 1)
			srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				chunk := bytes.Repeat([]byte{0xff}, 32<<10)
				var err error
				for written.Load() < 256<<20 && err == nil {
					var n int
					n, err = w.Write(chunk)
					written.Add(int64(n))
				}
				done <- err
			})
			_, res := call(t, tl, fetchArgs(srv.URL+"/file"), 65536)
			if res.Success || res.Error != tool.Failed || !strings.Contains(res.Output, "is binary; web_fetch returns text only") {
				t.Errorf("result %+v", res)
			}
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("server wrote the whole 256 MiB body")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("server still writing 5 s after the refusal: the connection was not closed")
			}
			if n := written.Load(); n > 32<<20 {
				t.Errorf("server wrote %d bytes before the connection closed", n)
			}
		})
	}
	t.Run("sniffed png", func(t *testing.T) {
		srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		})
		_, res := call(t, tl, fetchArgs(srv.URL+"/x"), 65536)
		if res.Success || !strings.Contains(res.Output, "looks like image/png, which is binary") {
			t.Errorf("result %+v", res)
		}
	})
}

func TestSizeLimit(t *testing.T) {
	body := strings.Repeat("abcdefghij", 500)
	srv, tl := serve(t, FetchOptions{MaxBytes: 1000}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(body))
	})
	_, res := call(t, tl, fetchArgs(srv.URL+"/big"), 65536)
	want := tool.Result{Success: true, Truncated: true, Output: "URL: " + srv.URL + "/big\nStatus: 200\nContent-Type: text/plain\nCharacters: 0-1000 of 1000\n\n" +
		body[:1000] + "\n[the download stopped at 1000 bytes (web.fetch_max_bytes); the rest of the page was not fetched]"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPaging walks a long multi-byte page with offset until the end: the
// parts join to the whole text, each output stays within the limit, and the
// re-fetches are served from the page cache.
func TestPaging(t *testing.T) {
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "line %03d: héllo wörld ✓ 🚀\n", i)
	}
	text := sb.String()
	var hits atomic.Int64
	srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(text))
	})
	const limit = 1000
	total := utf8.RuneCountInString(text)
	var got strings.Builder
	offset, parts := 0, 0
	for {
		_, res := call(t, tl, map[string]any{"url": srv.URL + "/long", "offset": offset}, limit)
		if !res.Success || len(res.Output) > limit {
			t.Fatalf("part at %d: success=%v, %d bytes (limit %d)", offset, res.Success, len(res.Output), limit)
		}
		head, body, _ := strings.Cut(res.Output, "\n\n")
		var start, end, tot int
		if _, err := fmt.Sscanf(head[strings.Index(head, "Characters:"):], "Characters: %d-%d of %d", &start, &end, &tot); err != nil {
			t.Fatalf("header %q: %v", head, err)
		}
		if start != offset || tot != total {
			t.Fatalf("header %q: want start %d total %d", head, offset, total)
		}
		parts++
		if end == total {
			if strings.Contains(body, "more characters") || res.Truncated {
				t.Errorf("last part still announces more: %q", body)
			}
			got.WriteString(body)
			break
		}
		trailerLine := fmt.Sprintf("\n[%d more characters; call web_fetch with offset=%d for the next part]", total-end, end)
		if !strings.HasSuffix(body, trailerLine) || !res.Truncated {
			t.Fatalf("part %d does not end with %q", parts, trailerLine)
		}
		got.WriteString(strings.TrimSuffix(body, trailerLine))
		offset = end
	}
	if diff := cmp.Diff(text, got.String()); diff != "" {
		t.Errorf("joined parts differ (-want +got):\n%s", diff)
	}
	if parts < 5 {
		t.Errorf("only %d parts", parts)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("server hit %d times; paging should use the cache", n)
	}
	_, res := call(t, tl, map[string]any{"url": srv.URL + "/long", "offset": total + 1}, limit)
	if res.Error != tool.InvalidArguments || !strings.Contains(res.Output, "past the end") {
		t.Errorf("offset past the end: %+v", res)
	}
}

func TestErrorStatus(t *testing.T) {
	for _, code := range []int{404, 410, 500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(code)
				fmt.Fprintf(w, "<html><body><h1>Error %d</h1><p>Nothing here.</p></body></html>", code)
			})
			_, res := call(t, tl, fetchArgs(srv.URL+"/missing"), 65536)
			text := fmt.Sprintf("# Error %d\n\nNothing here.", code)
			want := tool.Result{Error: tool.Failed, Output: fmt.Sprintf("URL: %s/missing\nStatus: %d\nContent-Type: text/html\nCharacters: 0-%d of %d\n\n%s",
				srv.URL, code, len(text), len(text), text)}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	tests := map[string]func(w http.ResponseWriter, r *http.Request){
		"no headers": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
		"slow body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("start"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			srv, tl := serve(t, FetchOptions{Timeout: 200 * time.Millisecond}, h)
			start := time.Now()
			_, res := call(t, tl, fetchArgs(srv.URL+"/slow"), 65536)
			if res.Success || res.Error != tool.Failed || !strings.Contains(res.Output, "timed out after 200ms") {
				t.Errorf("result %+v", res)
			}
			if d := time.Since(start); d > 2500*time.Millisecond {
				t.Errorf("returned after %s", d)
			}
		})
	}
}

// TestRequestHeaders: every hop carries the scv User-Agent and no cookie,
// credentials or referrer, even after the server sets a cookie and
// redirects.
func TestRequestHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	srv, tl := serve(t, FetchOptions{MaxRedirects: 2}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if r.URL.Path == "/start" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Redirect(w, r, "/end", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	})
	_, res := call(t, tl, fetchArgs(srv.URL+"/start"), 65536)
	if !res.Success {
		t.Fatalf("result %+v", res)
	}
	if len(seen) != 2 {
		t.Fatalf("%d requests, want 2", len(seen))
	}
	for i, h := range seen {
		if got := h.Get("User-Agent"); got != "scv/"+version.Version {
			t.Errorf("request %d User-Agent %q", i, got)
		}
		for _, k := range []string{"Cookie", "Authorization", "Referer", "Proxy-Authorization"} {
			if v, ok := h[k]; ok {
				t.Errorf("request %d carries %s: %v", i, k, v)
			}
		}
	}
}

// TestProxyIgnored points every proxy variable at a counting listener and
// fetches through a host name (net/http would never proxy 127.0.0.1 itself).
func TestProxyIgnored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("direct")) }))
	defer srv.Close()
	fx, g := newFixture(t, srv)
	proxy := "http://" + fx.trap.Addr.String()
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	tl := newFetchTool(t, FetchOptions{Guard: g})
	_, res := call(t, tl, fetchArgs("http://example.com:"+portOf(srv)+"/"), 65536)
	if !res.Success || !strings.HasSuffix(res.Output, "\n\ndirect") {
		t.Errorf("result %+v", res)
	}
	time.Sleep(50 * time.Millisecond)
	if n := fx.trap.Accepted(); n != 0 {
		t.Errorf("proxy received %d connections", n)
	}
}

func TestInvalidURLs(t *testing.T) {
	tl := newFetchTool(t, FetchOptions{})
	tests := []struct{ url, want string }{
		{"ftp://example.com/file", "only http and https URLs can be fetched"},
		{"file:///etc/passwd", "only http and https URLs can be fetched"},
		{"javascript:alert(1)", "only http and https URLs can be fetched"},
		{"example.com/page", "only http and https URLs can be fetched"},
		{"https://user:pass@example.com/", "URLs with embedded credentials are not fetched"},
		{"https://token@example.com/", "URLs with embedded credentials are not fetched"},
		{"http:///path", "no host"},
		{"http://exa mple.com/", "invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, res := call(t, tl, fetchArgs(tt.url), 65536)
			if res.Error != tool.InvalidArguments || !strings.Contains(res.Output, tt.want) {
				t.Errorf("result %+v, want invalid_arguments containing %q", res, tt.want)
			}
			if strings.Contains(res.Output, "pass@") {
				t.Errorf("credentials echoed: %q", res.Output)
			}
		})
	}
	_, res := call(t, tl, map[string]any{"url": "https://example.com/", "offset": -1}, 65536)
	if res.Error != tool.InvalidArguments {
		t.Errorf("negative offset: %+v", res)
	}
}

func TestNewFetchErrors(t *testing.T) {
	for _, opts := range []FetchOptions{{MaxRedirects: -1}, {AutoApprove: []string{"https://docs.rs"}}, {AutoApprove: []string{"*."}}, {AutoApprove: []string{"a.*.com"}}} {
		if _, err := NewFetch(opts); err == nil {
			t.Errorf("NewFetch(%+v) accepted", opts)
		}
	}
}

func TestCancel(t *testing.T) {
	srv, tl := serve(t, FetchOptions{}, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	p, err := tl.Plan(tool.Env{OutputLimit: 65536}, []byte(`{"url":"`+srv.URL+`/hang"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res := p.Run(ctx)
	if res.Error != tool.Cancelled {
		t.Errorf("result %+v, want cancelled", res)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("returned after %s", d)
	}
}

// TestPagingAfterRedirect: the next part can be asked for with the final URL
// the result shows; it comes from the cache.
func TestPagingAfterRedirect(t *testing.T) {
	var hits atomic.Int64
	text := strings.Repeat("0123456789", 200)
	srv, tl := serve(t, FetchOptions{MaxRedirects: 1}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(text))
	})
	_, first := call(t, tl, fetchArgs(srv.URL+"/old"), 1000)
	if !first.Success || !strings.HasPrefix(first.Output, "URL: "+srv.URL+"/new\n") {
		t.Fatalf("first part %+v", first)
	}
	_, next := call(t, tl, map[string]any{"url": srv.URL + "/new", "offset": 500}, 1000)
	if !next.Success || !strings.Contains(next.Output, "Characters: 500-") {
		t.Errorf("next part %+v", next)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("page fetched %d times, want 1", n)
	}
}
