//go:build darwin || freebsd

package proc

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// envTagged lists the live processes (other than this one) whose
// environment holds an entry key=value with match(value), with their start
// times. Environments come from ps(1), read once before the start times and
// once after, so a PID reused in between never matches.
func envTagged(key string, match func(value string) bool) []Ident {
	first := psTagged(key, match)
	if len(first) == 0 {
		return nil
	}
	var cands []Ident
	for _, pid := range first {
		if start, err := StartTime(pid); err == nil {
			cands = append(cands, Ident{PID: pid, Start: start})
		}
	}
	again := map[int]bool{}
	for _, pid := range psTagged(key, match) {
		again[pid] = true
	}
	var out []Ident
	for _, c := range cands {
		if again[c.PID] && Alive(c.PID, c.Start) {
			out = append(out, c)
		}
	}
	return out
}

// psTagged runs ps(1) over every process with its environment.
func psTagged(key string, match func(string) bool) []int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/ps", psEnvFlag, "-ww", "-axo", "pid=,pgid=,command=").Output()
	if err != nil {
		return nil
	}
	return parsePSEnv(out, key, match, os.Getpid())
}
