package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// benchTurnCalls is the number of tool calls of a benchmark turn.
const benchTurnCalls = 10

// benchTurnSession is a session whose model asks for benchTurnCalls calls
// of a read_only tool, one per step, then answers; it needs no test
// helper, so the same file measures a tree without hooks too.
func benchTurnSession(b *testing.B, opts func(*Options)) (*Session, *fakeModel) {
	b.Helper()
	echo := tool.MustDefine("echo", "echo text", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "echo " + p.Text, Run: func(context.Context) tool.Result {
			return tool.Result{Success: true, Output: "echo:" + p.Text}
		}}, nil
	})
	reg, err := tool.NewRegistry(echo)
	if err != nil {
		b.Fatal(err)
	}
	fm := &fakeModel{}
	o := Options{Model: fm, ModelName: "m", Registry: reg, Policy: approval.AskOnRisk, SystemPrompt: "sys",
		MaxSteps: benchTurnCalls + 2, Workspace: b.TempDir(), SessionID: "s1", OutputLimit: 4096,
		Context: ContextOptions{MaxTokens: 1 << 30, ReserveOutputTokens: 100, SafetyMarginTokens: 10, BytesPerToken: 3, SummaryMaxChars: 600},
		History: HistoryOptions{MaxBytes: 1 << 30, MaxMessages: 1 << 30}}
	if opts != nil {
		opts(&o)
	}
	return New(o), fm
}

// runBenchTurn runs one turn of benchTurnCalls calls and checks it.
func runBenchTurn(b *testing.B, s *Session, fm *fakeModel, n int) {
	fm.mu.Lock()
	for i := range benchTurnCalls {
		fm.script = append(fm.script, calls(model.ToolCall{ID: fmt.Sprint("c", i), Name: "echo", Arguments: `{"text":"x"}`}))
	}
	fm.script = append(fm.script, text("done"))
	fm.requests = nil
	fm.mu.Unlock()
	var last proto.TurnEvent
	s.RunTurn(context.Background(), fmt.Sprint("t", n), "go", func(e proto.TurnEvent) { last = e })
	if _, ok := last.(*proto.TurnCompleted); !ok {
		b.Fatalf("turn ended with %+v", last)
	}
	s.Clear()
}

// BenchmarkTurnNoHooks is a turn of 10 tool calls (fake model, a
// read_only tool) in a session without hooks: what every session pays.
// Run it on two trees (bench/hookcost.sh) to see what hooks cost a
// session that has none.
//
//	go test ./internal/agent -run '^$' -bench TurnNoHooks -count 10
func BenchmarkTurnNoHooks(b *testing.B) {
	s, fm := benchTurnSession(b, nil)
	n := 0
	for b.Loop() {
		runBenchTurn(b, s, fm, n)
		n++
	}
}
