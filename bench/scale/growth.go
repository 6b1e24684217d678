package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scv-agent/scv/bench/internal/benchd"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// growthOptions are the flags of the one-long-session mode (-growth).
type growthOptions struct {
	scv     string
	turns   int
	sample  int
	context int
	output  int
}

// growth runs one session of o.turns 1-step turns (a `read` of a file of
// o.output bytes, then a short answer) and prints, for windows of o.sample
// turns at the start, around a third, around two thirds and at the end, the
// median turn latency and the daemon's CPU per turn, and the ratio of the
// last window to the first.
func growth(o growthOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	var calls, lastBody atomic.Int64
	h := modeltest.NewHandler()
	h.Respond = func(_ string, body []byte) []modeltest.Step { return growthRespond(body, &calls) }
	url, stop, err := benchd.Serve(tailOnly(h, &lastBody))
	if err != nil {
		return err
	}
	defer stop()
	d, err := benchd.Start(o.scv, url, fmt.Sprintf("[context]\nmax_tokens = %d\n", o.context))
	if err != nil {
		return err
	}
	defer d.Stop()
	if err := writeFiles(d.WS, o.turns, o.output); err != nil {
		return err
	}
	c, err := d.Dial(ctx, "growth")
	if err != nil {
		return fmt.Errorf("%w (daemon log: %s)", err, d.LogPath())
	}
	defer c.Close()
	st, err := c.StartSession(ctx, proto.SessionStart{Cwd: d.WS})
	if err != nil {
		return err
	}
	wins := windows(o.turns, o.sample)
	lat := make([]time.Duration, o.turns+1)
	cpu := make([]time.Duration, o.turns+1) // daemon CPU before turn i (cpu[turns] after the last)
	drv := make([]time.Duration, o.turns+1) // the driver's own (the fake model's), likewise
	body := make([]int64, o.turns+1)
	compacted := 0
	for i := range o.turns {
		if inWindow(wins, i) || inWindow(wins, i-1) {
			if cpu[i], err = daemonCPU(d.Pid); err != nil {
				return err
			}
			drv[i], _ = daemonCPU(os.Getpid())
		}
		t := time.Now()
		n, err := growthTurn(ctx, c, st.SessionID, &compacted)
		if err != nil {
			return fmt.Errorf("turn %d: %w (daemon log: %s)", i+1, err, d.LogPath())
		}
		lat[i], body[i] = time.Since(t), lastBody.Load()
		if n != 2 {
			return fmt.Errorf("turn %d made %d model requests, want 2: the fake model no longer reads SCV's request body right", i+1, n)
		}
	}
	if cpu[o.turns], err = daemonCPU(d.Pid); err != nil {
		return err
	}
	drv[o.turns], _ = daemonCPU(os.Getpid())
	fresh, err := freshWindow(ctx, c, d, o.sample, &lastBody)
	if err != nil {
		return err
	}
	printGrowth(o, wins, lat, cpu, drv, body, compacted, fresh)
	return nil
}

// fig is one window's figures.
type fig struct {
	p50, cpu, drv time.Duration
	body          int64
}

// freshWindow runs sample turns in a new session of the same daemon (warm,
// and in the same minutes as the long session's last window).
func freshWindow(ctx context.Context, c *client.Conn, d *benchd.Daemon, sample int, lastBody *atomic.Int64) (fig, error) {
	st, err := c.StartSession(ctx, proto.SessionStart{Cwd: d.WS})
	if err != nil {
		return fig{}, err
	}
	cpu0, err := daemonCPU(d.Pid)
	if err != nil {
		return fig{}, err
	}
	drv0, _ := daemonCPU(os.Getpid())
	var lat []time.Duration
	compacted := 0
	for range sample {
		t := time.Now()
		if _, err := growthTurn(ctx, c, st.SessionID, &compacted); err != nil {
			return fig{}, fmt.Errorf("fresh session: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	cpu1, err := daemonCPU(d.Pid)
	if err != nil {
		return fig{}, err
	}
	drv1, _ := daemonCPU(os.Getpid())
	slices.Sort(lat)
	n := time.Duration(sample)
	return fig{p50: lat[len(lat)/2], cpu: (cpu1 - cpu0) / n, drv: (drv1 - drv0) / n, body: lastBody.Load()}, nil
}

// tailKeep is how much of a request body the growth mode's fake model
// sees: its end, where the newest input items, the instructions and the
// tools are (the body's keys are in order, "input" first).
const tailKeep = 128 << 10

// tailOnly reads each request's body through a fixed buffer and hands h a
// body of its last tailKeep bytes only, so the fake model's own cost (the
// driver shares the machine with the daemon) stays nearly flat while the
// body grows; size is set to the whole body's length.
func tailOnly(h http.Handler, size *atomic.Int64) http.Handler {
	pool := sync.Pool{New: func() any { return &tail{buf: make([]byte, 0, 2*tailKeep), copyBuf: make([]byte, 32<<10)} }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := pool.Get().(*tail)
		defer pool.Put(t)
		t.buf = t.buf[:0]
		n, _ := io.CopyBuffer(t, io.LimitReader(r.Body, 64<<20), t.copyBuf)
		size.Store(n)
		r.Body = io.NopCloser(bytes.NewReader(t.bytes()))
		h.ServeHTTP(w, r)
	})
}

// tail is a writer that keeps the last tailKeep bytes written to it.
type tail struct{ buf, copyBuf []byte }

func (t *tail) Write(p []byte) (int, error) {
	if len(t.buf)+len(p) > 2*tailKeep {
		keep := t.bytes()
		if len(p) >= tailKeep {
			keep = nil
		}
		t.buf = append(t.buf[:0], keep...)
	}
	if len(p) > tailKeep {
		t.buf = append(t.buf, p[len(p)-tailKeep:]...)
	} else {
		t.buf = append(t.buf, p...)
	}
	return len(p), nil
}

func (t *tail) bytes() []byte { return t.buf[max(0, len(t.buf)-tailKeep):] }

// growthRespond is the fake model of the growth mode. It decides from the
// end of the body alone, so its own cost does not grow with the session: a
// request whose newest input item is a tool result gets the answer, any
// other the next `read`.
func growthRespond(body []byte, calls *atomic.Int64) []modeltest.Step {
	out := bytes.LastIndex(body, []byte(`"type":"function_call_output"`))
	user := bytes.LastIndex(body, []byte(`"role":"user"`))
	if out > user {
		return []modeltest.Step{modeltest.Text("Read it; the file holds the configuration I expected.")}
	}
	n := calls.Add(1)
	return []modeltest.Step{modeltest.ToolCall(fmt.Sprintf("call_%d", n), "read", fmt.Sprintf(`{"path":"notes/%d.txt"}`, (n-1)%fileCount))}
}

const fileCount = 500

// writeFiles writes the files the model reads: text lines of about size
// bytes in all, each file different.
func writeFiles(ws string, turns, size int) error {
	dir := filepath.Join(ws, "notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := range min(turns, fileCount) {
		var b strings.Builder
		for l := 0; b.Len() < size; l++ {
			fmt.Fprintf(&b, "entry %d.%d: service=api-%d region=eu-west-%d replicas=%d ok\n", i, l, i%17, l%3, (i*7+l)%9)
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".txt"), []byte(b.String()[:size]), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// growthTurn runs one turn and returns how many model requests it made
// (assistant messages completed); compacted counts context.compacted events.
func growthTurn(ctx context.Context, c *client.Conn, sid string, compacted *int) (int, error) {
	steps := 0
	_, err := benchd.WatchTurn(ctx, c, sid, "go on", func(ev proto.Event) {
		switch ev.(type) {
		case *proto.AssistantCompleted:
			steps++
		case *proto.ContextCompacted:
			*compacted++
		}
	})
	return steps, err
}

// window is the turns [from, to) (0-based).
type window struct{ from, to int }

// windows are sample turns at the start, around a third and two thirds of
// the run, and at its end (fewer when they would overlap).
func windows(turns, sample int) []window {
	sample = max(1, min(sample, turns))
	var ws []window
	for _, centre := range []int{0, turns / 3, 2 * turns / 3, turns} {
		from := min(max(centre-sample/2, 0), turns-sample)
		if len(ws) > 0 && from < ws[len(ws)-1].to {
			continue
		}
		ws = append(ws, window{from, from + sample})
	}
	return ws
}

func inWindow(ws []window, i int) bool {
	for _, w := range ws {
		if i >= w.from && i < w.to {
			return true
		}
	}
	return false
}

// daemonCPU is the CPU time of every thread of pid, in nanoseconds from
// /proc/PID/task/*/schedstat (the clock-tick fields of /proc/PID/stat are
// too coarse for a few milliseconds a turn); it falls back to stat.
func daemonCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return benchd.CPUTime(pid)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return benchd.CPUTime(pid)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

func printGrowth(o growthOptions, wins []window, lat, cpu, drv []time.Duration, body []int64, compacted int, fresh fig) {
	fmt.Printf("growth: one session, %d 1-step turns (read of %d bytes, then an answer), context.max_tokens=%d, context.compacted=%d\n",
		o.turns, o.output, o.context, compacted)
	line := func(name string, f fig) {
		fmt.Printf("%-17s body=%7.1fKiB  p50=%6.2fms  cpu/turn=%6.2fms  driver cpu/turn=%5.2fms\n", name, float64(f.body)/1024, ms(f.p50), ms(f.cpu), ms(f.drv))
	}
	var figs []fig
	for _, w := range wins {
		l := slices.Clone(lat[w.from:w.to])
		slices.Sort(l)
		n := time.Duration(w.to - w.from)
		f := fig{p50: l[len(l)/2], cpu: (cpu[w.to] - cpu[w.from]) / n, drv: (drv[w.to] - drv[w.from]) / n, body: body[w.to-1]}
		figs = append(figs, f)
		line(fmt.Sprintf("turns %d-%d", w.from+1, w.to), f)
	}
	line(fmt.Sprintf("fresh 1-%d", o.sample), fresh)
	first, last := figs[0], figs[len(figs)-1]
	fmt.Printf("last/first: p50 %.2fx  cpu/turn %.2fx\n", ms(last.p50)/ms(first.p50), ms(last.cpu)/ms(first.cpu))
	fmt.Printf("last/fresh: p50 %.2fx  cpu/turn %.2fx\n", ms(last.p50)/ms(fresh.p50), ms(last.cpu)/ms(fresh.cpu))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
