// store_open measures what opening the store costs a process: it opens
// (creating or migrating) the database at the given path, reads its stats,
// and prints the time that took in process and the resident memory after
// it, with the store still open (VmRSS after a GC, and the peak VmHWM).
// With -link-only it links the store but never opens it, so comparing the
// two separates the driver's package initialisation from the open.
//
//	go build -o /tmp/store_open ./bench/store_open
//	/tmp/store_open /tmp/x/scv.db          # open + stats
//	/tmp/store_open -link-only             # linked, not opened
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/store"
)

func main() {
	linkOnly := flag.Bool("link-only", false, "do not open the store")
	flag.Parse()
	if *linkOnly {
		fmt.Println("linked, not opened;", memory())
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: store_open [-link-only] PATH")
		os.Exit(2)
	}
	start := time.Now()
	s, err := store.Open(context.Background(), store.Options{Path: flag.Arg(0)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	took := time.Since(start)
	mem := memory()
	start = time.Now()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("open + stats %v, close %v (%d sessions, %d bytes); %s\n", took.Round(time.Microsecond), time.Since(start).Round(time.Microsecond), st.Sessions, st.FileBytes, mem)
}

func memory() string {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "no /proc/self/status"
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}
