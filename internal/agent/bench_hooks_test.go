package agent

import (
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/hooks"
)

// BenchmarkTurnHookPair is BenchmarkTurnNoHooks with a no-op pre_tool and
// post_tool hook (/bin/true) on every call; it reports the cost of the
// pair per call against a paired run without hooks. Goal: at most 5 ms.
//
//	go test ./internal/agent -run '^$' -bench TurnHookPair -benchtime 20x
func BenchmarkTurnHookPair(b *testing.B) {
	noop := []string{"/bin/true"}
	with, fmWith := benchTurnSession(b, func(o *Options) {
		o.Hooks = hooks.New(hooks.Options{Env: []string{"PATH=/usr/bin:/bin"}, Workspace: o.Workspace, SessionID: "s1", Hooks: []hooks.Hook{
			{Name: "pre", Event: hooks.PreTool, Command: noop}, {Name: "post", Event: hooks.PostTool, Command: noop}}})
	})
	without, fmWithout := benchTurnSession(b, nil)
	var withNS, withoutNS int64
	n := 0
	for b.Loop() {
		// Paired: one turn without hooks, one with, alternately.
		start := nowNS()
		runBenchTurn(b, without, fmWithout, n)
		mid := nowNS()
		runBenchTurn(b, with, fmWith, n)
		withoutNS += mid - start
		withNS += nowNS() - mid
		n++
	}
	b.ReportMetric(float64(withNS-withoutNS)/float64(n*benchTurnCalls)/1e6, "ms-per-call-pair")
	b.ReportMetric(float64(withNS)/float64(withoutNS), "turn-ratio")
}

func nowNS() int64 { return time.Now().UnixNano() }
