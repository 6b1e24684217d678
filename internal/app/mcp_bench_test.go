package app

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// loopModel asks for one echo call, then answers with text, forever.
type loopModel struct{ n int }

func (m *loopModel) Stream(_ context.Context, req model.Request, _ func(model.Delta)) (model.Response, error) {
	m.n++
	if m.n%2 == 1 {
		return model.Response{ToolCalls: []model.ToolCall{{ID: "c" + strconv.Itoa(m.n), Name: "mcp__fake__echo", Arguments: `{"text":"x"}`}}}, nil
	}
	return model.Response{Content: "ok"}, nil
}

// BenchmarkMCPCallLoop is a trivial MCP tool call through SCV's loop: one
// turn in which the (in-memory) model asks for mcp__fake__echo and then
// answers; the call is validated against the server's schema, decided by
// the policy (read_only: runs), sent to the fake server over stdio, its
// result rendered, bounded and appended to the history. Compare with
// BenchmarkMCPCallDirect.
func BenchmarkMCPCallLoop(b *testing.B) {
	dir := b.TempDir()
	exe, env := mcptest.Fake(dir)
	a := New(Options{Env: map[string]string{"PATH": os.Getenv("PATH")}})
	defer a.Close()
	cfg := config.Defaults("/skills")
	envSecrets := map[string]config.Secret{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envSecrets[k] = config.Secret(v)
	}
	cfg.MCP.Servers = map[string]config.MCPServer{"fake": {Command: exe, Env: envSecrets, Enabled: true, StartupTimeoutSeconds: 30,
		ToolTimeoutSeconds: 30, Risk: config.RiskProcess, ReadOnlyTools: []string{"echo"}}}
	cfg.Web.Enabled = false
	ts, err := a.Tools(&cfg, dir, 0, false)
	if err != nil {
		b.Fatal(err)
	}
	defer ts.Release()
	sess := agent.New(agent.Options{Model: &loopModel{}, ModelName: "m", Registry: ts.Registry, Tools: ts.Current, Policy: approval.AskOnRisk,
		MaxSteps: 4, Workspace: dir, SessionID: "s", OutputLimit: 65536,
		Context: agent.ContextOptions{MaxTokens: 128000, ReserveOutputTokens: 100, SafetyMarginTokens: 10, BytesPerToken: 3, SummaryMaxChars: 600},
		History: agent.HistoryOptions{MaxBytes: 1 << 24, MaxMessages: 10000}})
	turn := func() {
		var last proto.TurnEvent
		sess.RunTurn(context.Background(), "t", "go", func(e proto.TurnEvent) { last = e })
		if _, ok := last.(*proto.TurnCompleted); !ok {
			b.Fatalf("turn ended with %+v", last)
		}
		sess.Clear()
	}
	turn() // starts the server
	for b.Loop() {
		turn()
	}
}

// BenchmarkMCPCallDirect is the same echo call made directly with the
// SDK's client on the same fake server.
func BenchmarkMCPCallDirect(b *testing.B) {
	dir := b.TempDir()
	exe, env := mcptest.Fake(dir)
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cmd := newCommand(exe, env)
	sess, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	for b.Loop() {
		res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func newCommand(exe string, env []string) *exec.Cmd {
	cmd := exec.Command(exe)
	cmd.Env = env
	return cmd
}
