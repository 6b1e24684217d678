//go:build linux || darwin || freebsd

package agent

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/hooks"
	"github.com/scv-agent/scv/internal/proc"
)

// BenchmarkTurnHookPair is BenchmarkTurnNoHooks with a no-op pre_tool and
// post_tool hook (/bin/true) on every call; it reports the cost of the
// pair per call against a paired run without hooks. Goal: at most 5 ms.
// contained runs the hooks under the best Containment available here (as
// a daemon does); group+tag is the fallback without one.
//
// floor-ms-per-pair is, in the same loop, two bare exec.Command("/bin/true")
// runs: what two processes cost this machine whoever starts them, so
// overhead-ms-per-pair (the pair less the floor) is SCV's own share.
//
//	go test ./internal/agent -run '^$' -bench TurnHookPair -benchtime 20x
func BenchmarkTurnHookPair(b *testing.B) {
	for _, tc := range []struct {
		name string
		mech proc.Mechanism
	}{{"contained", proc.MechAuto}, {"group+tag", proc.MechGroupTag}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := proc.NewContainment(proc.ContainOptions{Want: tc.mech})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			benchHookPair(b, c)
		})
	}
}

func benchHookPair(b *testing.B, c *proc.Containment) {
	noop := []string{"/bin/true"}
	with, fmWith := benchTurnSession(b, func(o *Options) {
		o.Hooks = hooks.New(hooks.Options{Env: []string{"PATH=/usr/bin:/bin"}, Workspace: o.Workspace, SessionID: "s1", Contain: c, Hooks: []hooks.Hook{
			{Name: "pre", Event: hooks.PreTool, Command: noop}, {Name: "post", Event: hooks.PostTool, Command: noop}}})
	})
	without, fmWithout := benchTurnSession(b, nil)
	var withNS, withoutNS, withCPU, withoutCPU, floorNS int64
	n := 0
	for b.Loop() {
		// Paired: one turn without hooks, one with, alternately.
		start, cpu0 := nowNS(), selfCPU()
		runBenchTurn(b, without, fmWithout, n)
		mid, cpu1 := nowNS(), selfCPU()
		runBenchTurn(b, with, fmWith, n)
		withoutNS += mid - start
		withNS += nowNS() - mid
		withoutCPU += cpu1 - cpu0
		withCPU += selfCPU() - cpu1
		f0 := nowNS()
		for range 2 * benchTurnCalls {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
		floorNS += nowNS() - f0
		n++
	}
	b.ReportMetric(float64(withCPU-withoutCPU)/float64(n*benchTurnCalls)/1e6, "cpu-ms-per-call-pair")
	b.ReportMetric(float64(withNS-withoutNS)/float64(n*benchTurnCalls)/1e6, "ms-per-call-pair")
	b.ReportMetric(float64(withNS)/float64(withoutNS), "turn-ratio")
	b.ReportMetric(float64(floorNS)/float64(n*benchTurnCalls)/1e6, "floor-ms-per-pair")
	b.ReportMetric(float64(withNS-withoutNS-floorNS)/float64(n*benchTurnCalls)/1e6, "overhead-ms-per-pair")
	b.Logf("mechanism %s", c.Describe())
}

func nowNS() int64 { return time.Now().UnixNano() }

// selfCPU is this process's user + system time in nanoseconds (children
// excluded): less sensitive to the machine's load than wall time.
func selfCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
