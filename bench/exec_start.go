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
	"strings"
	"syscall"
	"time"

	"github.com/scv-agent/scv/bench/internal/benchd"
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
	t, err := benchd.NewTree("exec_start")
	if err != nil {
		return err
	}
	defer t.Remove()
	addr, arrived, stop, err := serveModel(runs + 1)
	if err != nil {
		return err
	}
	defer stop()
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = \"http://%s\"\nmax_retries = 0\n", addr)
	if err := os.WriteFile(filepath.Join(t.Home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.User, "OPENAI_API_KEY=sk-test"}

	var all []execSample
	for i := range runs + 1 {
		s, err := execOnce(scv, t.Home, t.WS, env, arrived)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		if i == 0 {
			continue // warm-up
		}
		all = append(all, s)
		fmt.Printf("run %2d: first request %6.1f ms, exit %6.1f ms, cpu %6.1f ms, peak RSS %.1f MiB; scv version %6.1f ms\n",
			i, ms(s.first), ms(s.whole), ms(s.cpu), float64(s.peakKiB)/1024, ms(s.version))
	}
	printExecReport(all)
	return nil
}

// serveModel serves a scripted model on 127.0.0.1 that answers "ok" to
// each of n requests; arrived gets the time of a request as it comes (one
// waits; the others are dropped).
func serveModel(n int) (addr string, arrived chan time.Time, stop func(), err error) {
	arrived = make(chan time.Time, 1)
	h := modeltest.NewHandler()
	h.OnRequest = func(modeltest.Recorded) {
		select {
		case arrived <- time.Now():
		default:
		}
	}
	for range n {
		h.Script(modeltest.Text("ok"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln.Addr().String(), arrived, func() { srv.Close() }, nil
}

// execSample is one run: from the exec's start to its first model request
// and to its exit, its CPU time and peak RSS (wait4's, children included),
// and the wall time of the `scv version` run paired with it.
type execSample struct {
	first, whole, cpu, version time.Duration
	peakKiB                    int64
}

// execOnce times `scv version`, then one `scv exec "say ok"` that must
// print "ok" after its model request arrived.
func execOnce(scv, home, ws string, env []string, arrived <-chan time.Time) (execSample, error) {
	vstart := time.Now()
	if out, err := exec.Command(scv, "version").CombinedOutput(); err != nil {
		return execSample{}, fmt.Errorf("scv version: %v: %s", err, out)
	}
	vwall := time.Since(vstart)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, scv, "--scv-home", home, "exec", "say ok")
	cmd.Dir, cmd.Env = ws, env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return execSample{}, err
	}
	var got time.Time
	select {
	case got = <-arrived:
	case <-ctx.Done():
	}
	err := cmd.Wait()
	end := time.Now()
	if err != nil || strings.TrimSpace(out.String()) != "ok" || got.IsZero() {
		return execSample{}, fmt.Errorf("%v, output %q", err, out.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return execSample{first: got.Sub(start), whole: end.Sub(start), cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		version: vwall, peakKiB: ru.Maxrss}, nil
}

// printExecReport prints min / median / max of every figure of the runs,
// and of the first request's time over the paired version's.
func printExecReport(all []execSample) {
	pick := func(f func(execSample) time.Duration) []time.Duration {
		d := make([]time.Duration, len(all))
		for i, s := range all {
			d[i] = f(s)
		}
		return d
	}
	report("start → first model request", pick(func(s execSample) time.Duration { return s.first }))
	report("start → exit", pick(func(s execSample) time.Duration { return s.whole }))
	report("cpu (user+sys, children included)", pick(func(s execSample) time.Duration { return s.cpu }))
	report("scv version (paired run)", pick(func(s execSample) time.Duration { return s.version }))
	ratio, peak := make([]float64, len(all)), make([]float64, len(all))
	for i, s := range all {
		ratio[i], peak[i] = float64(s.first)/float64(s.version), float64(s.peakKiB)/1024
	}
	lo, mid, hi := benchd.Spread(ratio)
	fmt.Printf("%-36s min %6.2f  median %6.2f  max %6.2f\n", "first request / version, per pair", lo, mid, hi)
	lo, mid, hi = benchd.Spread(peak)
	fmt.Printf("%-36s min %6.1f  median %6.1f  max %6.1f MiB\n", "peak RSS", lo, mid, hi)
}

// report prints min / median / max of d in milliseconds.
func report(what string, d []time.Duration) {
	v := make([]float64, len(d))
	for i := range d {
		v[i] = ms(d[i])
	}
	lo, mid, hi := benchd.Spread(v)
	fmt.Printf("%-36s min %6.1f  median %6.1f  max %6.1f ms\n", what, lo, mid, hi)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
