// Command fakemodel serves a modeltest script on 127.0.0.1 for black-box
// tests of the scv binary: it prints its base URL on the first stdout line,
// answers one scripted response per request (both wire APIs), appends every
// request as a JSON line to -record, and exits on SIGINT/SIGTERM or after
// -lifetime.
//
//	fakemodel -script script.json [-record requests.jsonl] [-lifetime 10m]
//
// The script may also be named by SCV_FAKE_SCRIPT; its format is
// modeltest.LoadScript's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv("SCV_FAKE_SCRIPT"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, envScript string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	script := fs.String("script", envScript, "JSON script file (default $SCV_FAKE_SCRIPT)")
	record := fs.String("record", "", "append each request as a JSON line to this file")
	lifetime := fs.Duration("lifetime", 10*time.Minute, "exit after this long")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *script == "" {
		return errors.New("no script: pass -script or set SCV_FAKE_SCRIPT")
	}
	responses, err := modeltest.LoadScript(*script)
	if err != nil {
		return err
	}
	h := modeltest.NewHandler()
	for _, steps := range responses {
		h.Script(steps...)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: recorder(h, *record), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// recorder appends each request h records to path as one JSON line.
func recorder(h *modeltest.Handler, path string) http.Handler {
	if path != "" {
		h.OnRequest = func(r modeltest.Recorded) {
			line, _ := json.Marshal(map[string]any{"method": r.Method, "path": r.Path, "body": r.Body, "unscripted": r.Unscripted})
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fakemodel: record:", err)
				return
			}
			_, _ = f.Write(append(line, '\n'))
			_ = f.Close()
		}
	}
	return h
}
