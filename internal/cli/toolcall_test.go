package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

type sameParams struct {
	Text string `json:"text,omitempty"`
}

// sameRegistry holds the tools whose calls must end the same through
// `scv tools call` and through an agent turn: one with process risk, one
// that panics and one whose JSON output ignores the output limit.
func sameRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	def := func(name string, risk tool.Risk, run func() tool.Result) tool.Tool {
		return tool.MustDefine(name, name+" tool", nil, func(env tool.Env, p sameParams) (tool.Plan, error) {
			return tool.Plan{Risk: risk, Summary: name + " " + p.Text, Run: func(context.Context) tool.Result { return run() }}, nil
		})
	}
	reg, err := tool.NewRegistry(
		def("exec", tool.Process, func() tool.Result { return tool.Result{Success: true, Output: "ran"} }),
		def("boom", tool.ReadOnly, func() tool.Result { panic("kaput") }),
		def("flood", tool.ReadOnly, func() tool.Result {
			return tool.Result{Success: true, JSON: true, Output: `"` + strings.Repeat("é", 3000) + `"`}
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// oneCall is a model that asks for one tool call, then answers "done".
type oneCall struct {
	mu    sync.Mutex
	call  model.ToolCall
	asked int
}

func (m *oneCall) Stream(_ context.Context, _ model.Request, _ func(model.Delta)) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked++
	if m.asked == 1 {
		return model.Response{ToolCalls: []model.ToolCall{m.call}}, nil
	}
	return model.Response{Content: "done"}, nil
}

// viaAgent runs the call in an agent turn, answering every approval with
// approve, and returns what tool.completed carried and how the turn ended.
func viaAgent(t *testing.T, reg *tool.Registry, policy approval.Policy, approve bool, limit int, name, args string) (callOutput, proto.TurnEvent) {
	t.Helper()
	var s *agent.Session
	s = agent.New(agent.Options{
		Model: &oneCall{call: model.ToolCall{ID: "c1", Name: name, Arguments: args}}, ModelName: "m", Registry: reg, Policy: policy,
		MaxSteps: 4, Workspace: t.TempDir(), SessionID: "s1", OutputLimit: limit,
		Context: agent.ContextOptions{MaxTokens: 100000, ReserveOutputTokens: 100, SafetyMarginTokens: 10, BytesPerToken: 3, SummaryMaxChars: 600},
		History: agent.HistoryOptions{MaxBytes: 1 << 20, MaxMessages: 1000},
	})
	var got callOutput
	var last proto.TurnEvent
	s.RunTurn(t.Context(), "t1", "go", func(ev proto.TurnEvent) {
		switch ev := ev.(type) {
		case *proto.ApprovalRequested:
			go s.Resolve(ev.ApprovalID, approval.Answer{Approved: approve})
		case *proto.ToolCompleted:
			got = callOutput{Name: ev.Name, Success: ev.Success, Error: ev.Error, Truncated: ev.Truncated, Output: outputValue(tool.Result{Output: ev.Output})}
		}
		last = ev
	})
	return got, last
}

// viaCLI runs the call as `scv tools call` does, with --yes = approve.
func viaCLI(t *testing.T, reg *tool.Registry, policy approval.Policy, approve bool, limit int, name, args string) (callOutput, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{ctx: t.Context(), stdio: Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env: Env{}}
	err := g.callTool(reg, policy, limit, t.TempDir(), approve, name, args)
	var got callOutput
	if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
		t.Fatalf("stdout is not one JSON result: %v\n%s", jerr, out.String())
	}
	if !approve && strings.Contains(got.Error, "denied") && policy != approval.DenyOnRisk && !strings.Contains(errb.String(), "pass --yes to approve") {
		t.Errorf("a denied call does not say how to approve it: %q", errb.String())
	}
	return got, err
}

// TestToolsCallMatchesAgent: `scv tools call` and an agent turn run a call
// through the same path, so a denial reads the same, an oversized result is
// cut the same way, and a crashing tool is caught the same way (a failed
// result, and a runtime error: exit 1 here, turn.failed there).
func TestToolsCallMatchesAgent(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name     string
		policy   approval.Policy
		approve  bool
		call     string
		want     callOutput
		crashed  bool
		wantText string // a piece of the output
	}{
		{name: "not approved", policy: approval.AskOnRisk, call: "exec",
			want: callOutput{Name: "exec", Error: "denied"}, wantText: "denied: the user did not approve this exec call"},
		{name: "policy deny-on-risk", policy: approval.DenyOnRisk, approve: true, call: "exec",
			want: callOutput{Name: "exec", Error: "denied"}, wantText: `denied: the approval policy \"deny-on-risk\" does not allow exec calls (risk process); do not retry this call`},
		{name: "approved", policy: approval.AskAlways, approve: true, call: "exec",
			want: callOutput{Name: "exec", Success: true}, wantText: `"ran"`},
		{name: "output bound", policy: approval.AskOnRisk, call: "flood",
			want: callOutput{Name: "flood", Success: true, Truncated: true}, wantText: "[output cut: 959 of 6002 bytes shown]"},
		{name: "panic", policy: approval.AskOnRisk, call: "boom", crashed: true,
			want: callOutput{Name: "boom", Error: "failed"}, wantText: "the boom tool crashed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fromAgent, end := viaAgent(t, sameRegistry(t), tt.policy, tt.approve, limit, tt.call, `{"text":"x"}`)
			fromCLI, err := viaCLI(t, sameRegistry(t), tt.policy, tt.approve, limit, tt.call, `{"text":"x"}`)
			if d := cmp.Diff(fromAgent, fromCLI); d != "" {
				t.Errorf("agent and scv tools call differ (-agent +cli):\n%s", d)
			}
			if !strings.Contains(string(fromCLI.Output), tt.wantText) {
				t.Errorf("output %s lacks %q", fromCLI.Output, tt.wantText)
			}
			var text string
			if json.Unmarshal(fromCLI.Output, &text) == nil && len(text) > limit {
				t.Errorf("output of %d bytes is over the limit %d", len(text), limit)
			}
			fromCLI.Output = nil
			if d := cmp.Diff(tt.want, fromCLI); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if tt.crashed {
				if err == nil || !strings.Contains(err.Error(), "kaput") {
					t.Errorf("scv tools call error = %v, want the crash", err)
				}
				if f, ok := end.(*proto.TurnFailed); !ok || f.Code != proto.FailInternal || !strings.Contains(f.Message, "kaput") {
					t.Errorf("the turn ended with %+v, want turn.failed internal_error naming the crash", end)
				}
				return
			}
			if end.EventType() != proto.EventTurnCompleted {
				t.Errorf("the turn ended with %+v", end)
			}
		})
	}
}
