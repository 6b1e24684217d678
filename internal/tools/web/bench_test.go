package web

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"

	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/tool"
)

// bigPage repeats the bodies of the golden pages inside one document until
// it reaches size bytes (bench/web_fetch builds the same page).
func bigPage(b *testing.B, size int) []byte {
	b.Helper()
	var bodies [][]byte
	for _, n := range []string{"docs", "article", "table", "links"} {
		raw, err := os.ReadFile(filepath.Join("testdata", n+".html"))
		if err != nil {
			b.Fatal(err)
		}
		if i := bytes.Index(raw, []byte("<body")); i >= 0 {
			raw = raw[i:]
		}
		bodies = append(bodies, raw)
	}
	var buf bytes.Buffer
	buf.WriteString("<!DOCTYPE html><html><head><title>big</title></head><body>")
	for i := 0; buf.Len() < size; i++ {
		buf.WriteString("<section>")
		buf.Write(bodies[i%len(bodies)])
		buf.WriteString("</section>")
	}
	buf.WriteString("</body></html>")
	return buf.Bytes()
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
