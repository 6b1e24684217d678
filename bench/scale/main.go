// scale measures one daemon under many concurrent sessions: for each N of
// -sessions it starts the daemon given by -scv on a fresh home with a
// stateless fake model in process (every turn is -steps `bash true` calls,
// then an answer, decided from the request body alone), opens N sessions,
// one protocol connection each, runs one warm-up turn in each and then
// -turns measured turns per session (at least -total in all) concurrently, approving every call over
// the protocol, and prints one line per N:
//
//	sessions=200 turns=400 turns/s=57.7 p50=3.1s p99=4.7s cpu/turn=7.2ms rss idle=20.4MiB peak=107.2MiB after=29.9MiB (anon 11.2, file 18.7) errors=0
//
// "idle" is the daemon's VmRSS before any session, "after" its VmRSS once every session is closed and -settle
// has passed (memory given back after the burst), split into anonymous memory (the heap, stacks) and
// file pages (the binary's pages touched, the database). The daemon's
// protocol.max_sessions is raised to N (it is 128 unless configured). It
// kills every process it started (by PID) before it exits.
//
//	go build -o /tmp/scv ./cmd/scv
//	go run ./bench/scale -scv /tmp/scv -sessions 1,10,50,200
//
// With -growth N it instead runs one session of N 1-step turns and prints
// median latency and daemon CPU per turn for windows of -sample turns
// (start, a third, two thirds, end) and for a fresh session after them
// (growth.go; -context sets context.max_tokens, -output the bytes read a
// turn):
//
//	go run ./bench/scale -scv /tmp/scv -growth 1500 -sample 50
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/bench/internal/benchd"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

type options struct {
	scv    string
	steps  int
	turns  int
	total  int
	settle time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.scv, "scv", "", "scv binary to measure (required)")
	sessions := flag.String("sessions", "1,10,50,200", "comma-separated numbers of concurrent sessions")
	flag.IntVar(&o.steps, "steps", 5, "bash steps per turn")
	flag.IntVar(&o.turns, "turns", 2, "measured turns per session (at least -total in all)")
	flag.IntVar(&o.total, "total", 40, "measured turns in all at least (fewer sessions run more turns each)")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "wait after the burst before reading the daemon's RSS")
	g := growthOptions{}
	flag.IntVar(&g.turns, "growth", 0, "instead: one session of this many 1-step turns, figures per window of turns (see growth.go)")
	flag.IntVar(&g.sample, "sample", 50, "with -growth: turns per measured window")
	flag.IntVar(&g.context, "context", 1000000, "with -growth: context.max_tokens (the default keeps the whole history selected)")
	flag.IntVar(&g.output, "output", 300, "with -growth: bytes of the file each turn reads")
	flag.Parse()
	if o.scv == "" {
		fmt.Fprintln(os.Stderr, "scale: -scv is required")
		os.Exit(2)
	}
	if g.turns > 0 {
		g.scv = o.scv
		if err := growth(g); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		return
	}
	var ns []int
	for _, f := range strings.Split(*sessions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "scale: -sessions: %q is not a positive number\n", f)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	if o.steps < 1 || o.turns < 1 {
		fmt.Fprintln(os.Stderr, "scale: -steps and -turns must be at least 1")
		os.Exit(2)
	}
	for _, n := range ns {
		line, err := run(o, n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		fmt.Println(line)
	}
}

// respond is the stateless fake model: a request whose history holds fewer
// tool results than steps × prompts gets the next `bash true` call, else the
// answer. It reads only counts from the body, so any number of sessions
// can share it.
func respond(steps int) func(string, []byte) []modeltest.Step {
	return func(_ string, body []byte) []modeltest.Step {
		prompts := bytes.Count(body, []byte(`"role":"user"`))
		results := bytes.Count(body, []byte(`"type":"function_call_output"`))
		if results < prompts*steps {
			return []modeltest.Step{modeltest.ToolCall(fmt.Sprintf("c%d", results), "bash", `{"command":"true"}`)}
		}
		return []modeltest.Step{modeltest.Text("done")}
	}
}

func run(o options, n int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	h := modeltest.NewHandler()
	h.Respond = respond(o.steps)
	url, stop, err := benchd.Serve(h)
	if err != nil {
		return "", err
	}
	defer stop()
	d, err := benchd.Start(o.scv, url, fmt.Sprintf("[protocol]\nmax_sessions = %d\n", max(n, 128)))
	if err != nil {
		return "", err
	}
	defer d.Stop()

	var rssIdle int64
	conns := make([]*client.Conn, n)
	sids := make([]string, n)
	for i := range n {
		c, err := d.Dial(ctx, "scale")
		if err != nil {
			return "", fmt.Errorf("session %d: %w (daemon log: %s)", i, err, d.LogPath())
		}
		defer c.Close()
		if i == 0 { // the idle figure: the daemon started, no session yet
			time.Sleep(o.settle / 5)
			rssIdle, _ = benchd.StatusKB(d.Pid, "VmRSS")
		}
		st, err := c.StartSession(ctx, proto.SessionStart{Cwd: d.WS})
		if err != nil {
			return "", fmt.Errorf("session %d: %w", i, err)
		}
		conns[i], sids[i] = c, st.SessionID
	}

	// Warm-up: one turn per session, all at once.
	if _, errs := burst(ctx, conns, sids, 1, o.steps); errs > 0 {
		return "", fmt.Errorf("%d warm-up turns failed", errs)
	}
	cpu0, err := benchd.CPUTime(d.Pid)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	lat, errs := burst(ctx, conns, sids, max(o.turns, (o.total+n-1)/n), o.steps)
	wall := time.Since(t0)
	cpu1, err := benchd.CPUTime(d.Pid)
	if err != nil {
		return "", err
	}
	peak, _ := benchd.StatusKB(d.Pid, "VmHWM")
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(o.settle)
	after, _ := benchd.StatusKB(d.Pid, "VmRSS")
	anon, _ := benchd.StatusKB(d.Pid, "RssAnon")
	file, _ := benchd.StatusKB(d.Pid, "RssFile")

	slices.Sort(lat)
	turns := len(lat)
	return fmt.Sprintf("sessions=%d turns=%d turns/s=%.1f p50=%s p99=%s cpu/turn=%.1fms rss idle=%.1fMiB peak=%.1fMiB after=%.1fMiB (anon %.1f, file %.1f) errors=%d",
		n, turns, float64(turns)/wall.Seconds(), pct(lat, 50), pct(lat, 99),
		float64(cpu1-cpu0)/float64(max(turns, 1))/1e6, mib(rssIdle), mib(peak), mib(after), mib(anon), mib(file), errs), nil
}

// burst runs turns turns in every session concurrently and returns each
// completed turn's latency and the number of failed turns (a turn that did
// not make steps calls counts as failed).
func burst(ctx context.Context, conns []*client.Conn, sids []string, turns, steps int) ([]time.Duration, int) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs int
		wg   sync.WaitGroup
	)
	for i := range conns {
		wg.Go(func() {
			for range turns {
				t := time.Now()
				approved, err := benchd.Turn(ctx, conns[i], sids[i])
				if err == nil && approved != steps {
					err = fmt.Errorf("the turn made %d bash calls, want %d: the fake model no longer reads SCV's request body right", approved, steps)
				}
				mu.Lock()
				if err != nil {
					errs++
					fmt.Fprintf(os.Stderr, "scale: session %d: %v\n", i, err)
				} else {
					lat = append(lat, time.Since(t))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, errs
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := min(len(sorted)-1, (len(sorted)*p+99)/100-1)
	return sorted[max(i, 0)].Round(time.Millisecond).String()
}

func mib(kb int64) float64 { return float64(kb) / 1024 }
