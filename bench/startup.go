//go:build ignore

// startup times whole scv processes from the outside: wall time, CPU time
// (user + system) and peak RSS (wait4's ru_maxrss) of `scv --version`,
// `scv tools list` and `scv tools call read` on a 200-byte file, next to a
// Go hello-world built here, and the idle RSS of a `scv run` daemon
// (VmRSS and VmHWM from /proc after one status query). With -before, a
// second binary is measured in the same rounds, one run of each in turn,
// so a machine whose load drifts affects both alike. Every figure is
// printed as min / median / max over the rounds; quote the median.
//
//	go build -o /tmp/scv ./cmd/scv
//	go run bench/startup.go -scv /tmp/scv [-before /tmp/scv-old] [-n 20]
//
// `scv exec` up to its first model request is timed by bench/exec_start.go.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/scv-agent/scv/bench/internal/benchd"
)

type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

func main() {
	scv := flag.String("scv", "", "the scv binary to measure")
	before := flag.String("before", "", "a second scv binary measured in the same rounds")
	runs := flag.Int("n", 20, "rounds (one warm-up round is not counted)")
	daemonRuns := flag.Int("daemon", 5, "daemon starts for the idle RSS (0 skips it)")
	flag.Parse()
	if *scv == "" {
		fmt.Fprintln(os.Stderr, "usage: go run bench/startup.go -scv PATH [-before PATH] [-n ROUNDS] [-daemon N]")
		os.Exit(2)
	}
	if err := run(*scv, *before, *runs, *daemonRuns); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

// job is one command line timed in every round, built for a binary.
type job struct {
	name string
	argv func(bin string) []string
}

// helloJob names the Go hello-world, timed once per round (not per binary).
const helloJob = "Go hello-world"

func run(scv, before string, runs, daemonRuns int) error {
	t, err := benchd.NewTree("startup")
	if err != nil {
		return err
	}
	defer t.Remove()
	if err := os.WriteFile(filepath.Join(t.WS, "small.txt"), []byte(strings.Repeat("0123456789abcdef\n", 12)[:200]), 0o644); err != nil {
		return err
	}
	hello, err := buildHello(t.Root)
	if err != nil {
		return err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.User, "SCV_HOME=" + t.Home}

	bins := []string{scv}
	if before != "" {
		bins = append(bins, before)
	}
	jobs := startupJobs(hello)
	results, err := rounds(jobs, bins, runs, t.WS, env)
	if err != nil {
		return err
	}
	fmt.Printf("%d rounds; min / median / max\n", runs)
	printRounds(jobs, bins, results)
	printRatios(bins, results)
	if daemonRuns <= 0 {
		return nil
	}
	return daemonReport(bins, daemonRuns, t.Root, t.WS, env)
}

// startupJobs are the command lines timed: the hello-world, then scv's.
func startupJobs(hello string) []job {
	return []job{
		{helloJob, func(string) []string { return []string{hello} }},
		{"scv --version", func(bin string) []string { return []string{bin, versionFlag(bin)} }},
		{"scv tools list", func(bin string) []string { return []string{bin, "tools", "list"} }},
		{"scv tools call read", func(bin string) []string {
			return []string{bin, "tools", "call", "read", `{"path":"small.txt"}`}
		}},
	}
}

// resultKey is the key of a job's samples on one binary.
func resultKey(j, bin string) string { return j + " | " + bin }

// rounds runs every job on every binary (the hello-world on the first
// only), one run of each in turn, runs+1 times, and returns the samples
// of all rounds but the first (the warm-up) by resultKey.
func rounds(jobs []job, bins []string, runs int, ws string, env []string) (map[string][]sample, error) {
	results := map[string][]sample{}
	for round := range runs + 1 {
		for _, j := range jobs {
			for _, bin := range bins {
				if j.name == helloJob && bin != bins[0] {
					continue
				}
				s, err := measure(j.argv(bin), ws, env)
				if err != nil {
					return nil, fmt.Errorf("%s (%s): %w", j.name, bin, err)
				}
				if round > 0 {
					results[resultKey(j.name, bin)] = append(results[resultKey(j.name, bin)], s)
				}
			}
		}
	}
	return results, nil
}

// printRounds prints the wall time, CPU time and peak RSS of each job on
// each binary.
func printRounds(jobs []job, bins []string, results map[string][]sample) {
	for _, j := range jobs {
		for _, bin := range bins {
			ss, ok := results[resultKey(j.name, bin)]
			if !ok {
				continue
			}
			fmt.Printf("%-22s %-28s wall %s  cpu %s  peak RSS %s\n", j.name, filepath.Base(bin),
				spread(ss, func(s sample) float64 { return ms(s.wall) }, "ms"),
				spread(ss, func(s sample) float64 { return ms(s.cpu) }, "ms"),
				spread(ss, func(s sample) float64 { return float64(s.rssKiB) / 1024 }, "MiB"))
		}
	}
}

// printRatios prints, for each binary, its --version wall time over the
// hello-world's of the same round.
func printRatios(bins []string, results map[string][]sample) {
	for _, bin := range bins {
		hs, vs := results[resultKey(helloJob, bins[0])], results[resultKey("scv --version", bin)]
		ratios := make([]float64, len(vs))
		for i := range vs {
			ratios[i] = float64(vs[i].wall) / float64(hs[i].wall)
		}
		lo, mid, hi := benchd.Spread(ratios)
		fmt.Printf("scv --version / hello-world wall, per round (%s): min %.2f  median %.2f  max %.2f\n",
			filepath.Base(bin), lo, mid, hi)
	}
}

// daemonReport starts each binary's daemon daemonRuns times and prints its
// idle memory.
func daemonReport(bins []string, daemonRuns int, work, ws string, env []string) error {
	for _, bin := range bins {
		var rss, hwm, anon, file []float64
		for range daemonRuns {
			m, err := daemonIdle(bin, work, ws, env)
			if err != nil {
				return fmt.Errorf("daemon (%s): %w", bin, err)
			}
			rss, hwm = append(rss, m.rss), append(hwm, m.hwm)
			anon, file = append(anon, m.anon), append(file, m.file)
		}
		lo, mid, hi := benchd.Spread(rss)
		_, hwmMid, _ := benchd.Spread(hwm)
		_, anonMid, _ := benchd.Spread(anon)
		_, fileMid, _ := benchd.Spread(file)
		fmt.Printf("daemon idle %-28s VmRSS min %.1f median %.1f max %.1f MiB; VmHWM median %.1f MiB; RssAnon median %.1f, RssFile median %.1f MiB\n",
			filepath.Base(bin), lo, mid, hi, hwmMid, anonMid, fileMid)
	}
	return nil
}

// versionFlag is --version, or the version command for a binary that
// predates the flag.
func versionFlag(bin string) string {
	if exec.Command(bin, "--version").Run() != nil {
		return "version"
	}
	return "--version"
}

func measure(argv []string, dir string, env []string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKiB: ru.Maxrss}, nil
}

// idleMemory is a daemon's resident memory in MiB: VmRSS, VmHWM, and
// VmRSS split into anonymous pages (heap, stacks) and file-backed pages
// (the binary's code and data).
type idleMemory struct{ rss, hwm, anon, file float64 }

// daemonIdle starts `scv run` (which opens the session database), asks it
// for its status once, waits half a second and reads its resident memory.
func daemonIdle(bin, work, ws string, env []string) (m idleMemory, err error) {
	home, err := os.MkdirTemp(work, "daemon")
	if err != nil {
		return m, err
	}
	denv := append(slices.Clone(env), "SCV_HOME="+home)
	cmd := exec.Command(bin, "run")
	cmd.Dir, cmd.Env = ws, denv
	if err := cmd.Start(); err != nil {
		return m, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		st := exec.CommandContext(ctx, bin, "status")
		st.Dir, st.Env = ws, denv
		if st.Run() == nil {
			break
		}
		if ctx.Err() != nil {
			return m, fmt.Errorf("the daemon did not answer within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return m, err
	}
	field := func(name string) float64 {
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				var kb float64
				fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
				return kb / 1024
			}
		}
		return 0
	}
	return idleMemory{rss: field("VmRSS"), hwm: field("VmHWM"), anon: field("RssAnon"), file: field("RssFile")}, nil
}

func buildHello(work string) (string, error) {
	dir := filepath.Join(work, "hello")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, "main.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hello-world: %v: %s", err, out)
	}
	return bin, nil
}

func spread(ss []sample, f func(sample) float64, unit string) string {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	lo, mid, hi := benchd.Spread(v)
	return fmt.Sprintf("%.1f / %.1f / %.1f %s", lo, mid, hi, unit)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
