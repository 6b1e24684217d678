//go:build ignore

// exec_start times `scv exec` from the moment its process is started to the
// moment its first model request reaches a scripted model server on
// 127.0.0.1, and the whole exec (the server answers "ok" at once). It prints
// every run, then min / median / max of both, and the peak RSS and CPU time
// that wait4 reports for the exec process (its own children included).
// Each run is paired with a run of `scv version` just before it, and the
// ratio exec-to-first-request / version is taken pair by pair, so a machine
// whose speed drifts still gives a meaningful ratio.
//
//	go build -o /tmp/scv ./cmd/scv
//	go run bench/exec_start.go -scv /tmp/scv [-n 20]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

func main() {
	scv := flag.String("scv", "", "path of the scv binary to time")
	runs := flag.Int("n", 20, "number of runs (one warm-up run is not counted)")
	flag.Parse()
	if *scv == "" {
		fmt.Fprintln(os.Stderr, "usage: go run bench/exec_start.go -scv PATH [-n RUNS]")
		os.Exit(2)
	}
	if err := run(*scv, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "exec_start:", err)
		os.Exit(1)
	}
}

func run(scv string, runs int) error {
	work, err := os.MkdirTemp("", "exec_start")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	home, ws, user := filepath.Join(work, "home"), filepath.Join(work, "ws"), filepath.Join(work, "user")
	for _, d := range []string{home, ws, user} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}

	arrived := make(chan time.Time, 1)
	h := modeltest.NewHandler()
	h.OnRequest = func(modeltest.Recorded) {
		select {
		case arrived <- time.Now():
		default:
		}
	}
	for range runs + 1 {
		h.Script(modeltest.Text("ok"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	cfg := fmt.Sprintf("[providers.openai]\nbase_url = \"http://%s\"\nmax_retries = 0\n", ln.Addr())
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + user, "OPENAI_API_KEY=sk-test"}

	var first, whole, cpu, version []time.Duration
	var ratio []float64
	var peak []int64
	for i := range runs + 1 {
		vstart := time.Now()
		if out, err := exec.Command(scv, "version").CombinedOutput(); err != nil {
			return fmt.Errorf("scv version: %v: %s", err, out)
		}
		vwall := time.Since(vstart)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, scv, "--scv-home", home, "exec", "say ok")
		cmd.Dir, cmd.Env = ws, env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			cancel()
			return err
		}
		var got time.Time
		select {
		case got = <-arrived:
		case <-ctx.Done():
		}
		err := cmd.Wait()
		end := time.Now()
		cancel()
		if err != nil || strings.TrimSpace(out.String()) != "ok" || got.IsZero() {
			return fmt.Errorf("run %d: %v, output %q", i, err, out.String())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		c := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if i == 0 {
			continue // warm-up
		}
		first = append(first, got.Sub(start))
		whole = append(whole, end.Sub(start))
		cpu = append(cpu, c)
		peak = append(peak, ru.Maxrss)
		version = append(version, vwall)
		ratio = append(ratio, float64(got.Sub(start))/float64(vwall))
		fmt.Printf("run %2d: first request %6.1f ms, exit %6.1f ms, cpu %6.1f ms, peak RSS %.1f MiB; scv version %6.1f ms\n",
			i, ms(got.Sub(start)), ms(end.Sub(start)), ms(c), float64(ru.Maxrss)/1024, ms(vwall))
	}
	report("start → first model request", first)
	report("start → exit", whole)
	report("cpu (user+sys, children included)", cpu)
	report("scv version (paired run)", version)
	slices.Sort(ratio)
	fmt.Printf("%-36s min %6.2f  median %6.2f  max %6.2f\n", "first request / version, per pair", ratio[0], ratio[len(ratio)/2], ratio[len(ratio)-1])
	slices.Sort(peak)
	fmt.Printf("%-36s min %6.1f  median %6.1f  max %6.1f MiB\n", "peak RSS", float64(peak[0])/1024,
		float64(peak[len(peak)/2])/1024, float64(peak[len(peak)-1])/1024)
	return nil
}

func report(what string, d []time.Duration) {
	slices.Sort(d)
	fmt.Printf("%-36s min %6.1f  median %6.1f  max %6.1f ms\n", what, ms(d[0]), ms(d[len(d)/2]), ms(d[len(d)-1]))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
