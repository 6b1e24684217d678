package web

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"

	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// bigPage is the benchmarks' 2 MiB page (bench/web_fetch fetches the same).
func bigPage(b *testing.B, size int) []byte {
	b.Helper()
	page, err := testutil.BigHTMLPage("testdata", size)
	if err != nil {
		b.Fatal(err)
	}
	return page
}

func BenchmarkHTMLToText(b *testing.B) {
	page := bigPage(b, 2<<20)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := htmlToText(page, "https://docs.example.com/big.html"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTMLToMarkdownPlain is html-to-markdown used plainly (inline
// links, default plugins), the baseline for BenchmarkHTMLToText.
func BenchmarkHTMLToMarkdownPlain(b *testing.B) {
	page := string(bigPage(b, 2<<20))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := htmltomarkdown.ConvertString(page); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetch2MiB fetches a 2 MiB HTML page from a local server end to
// end (guard, HTTP, conversion, first page of output); the cache is
// bypassed because every call has offset 0.
func BenchmarkFetch2MiB(b *testing.B) {
	page := bigPage(b, 2<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()
	g := netguard.New(netguard.Options{AllowAddrPorts: []netip.AddrPort{srv.Listener.Addr().(*net.TCPAddr).AddrPort()}})
	tl, err := NewFetch(FetchOptions{Guard: g, MaxBytes: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := tl.Plan(tool.Env{OutputLimit: 65536}, []byte(`{"url":"`+srv.URL+`/big"}`))
		if err != nil {
			b.Fatal(err)
		}
		if res := p.Run(context.Background()); !res.Success {
			b.Fatal(res.Output)
		}
	}
}
