// Command web_fetch measures one web_fetch of a 2 MiB HTML page from a local
// server end to end: wall time per call and the peak RSS of the process
// (server and client together). With -write it only writes the page, for
// comparing with `w3m -dump` and `lynx -dump` (bench/web_html2text.sh).
//
//	go run ./bench/web_fetch [-n 10] [-write /tmp/page.html]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/netguard"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/tools/web"
)

func main() {
	n := flag.Int("n", 10, "fetches to time")
	write := flag.String("write", "", "write the page to this file and exit")
	flag.Parse()
	page := bigPage(2 << 20)
	if *write != "" {
		if err := os.WriteFile(*write, page, 0o644); err != nil {
			log.Fatal(err)
		}
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()
	g := netguard.New(netguard.Options{AllowAddrPorts: []netip.AddrPort{srv.Listener.Addr().(*net.TCPAddr).AddrPort()}})
	tl, err := web.NewFetch(web.FetchOptions{Guard: g, MaxBytes: 4 << 20})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("page: %d bytes; RSS before first fetch: %d KiB\n", len(page), maxRSS())
	for i := range *n {
		start := time.Now()
		p, err := tl.Plan(tool.Env{OutputLimit: 65536}, []byte(`{"url":"`+srv.URL+`/big"}`))
		if err != nil {
			log.Fatal(err)
		}
		res := p.Run(context.Background())
		if !res.Success {
			log.Fatal(res.Output)
		}
		fmt.Printf("fetch %d: %v, output %d bytes, peak RSS so far %d KiB\n", i+1, time.Since(start).Round(time.Millisecond), len(res.Output), maxRSS())
	}
}

func maxRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

// bigPage is the page BenchmarkHTMLToText converts.
func bigPage(size int) []byte {
	page, err := testutil.BigHTMLPage(filepath.Join("internal", "tools", "web", "testdata"), size)
	if err != nil {
		log.Fatalf("%v (run from the repository root)", err)
	}
	return page
}
