package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// BenchmarkDaemonMCPRSS measures a `scv run` daemon's resident memory after
// one session ran one turn, without MCP servers and with 1 and 5 idle stdio
// servers (the fake Go server) started by that turn. Each iteration starts
// three fresh daemons; run it with -benchtime=Nx.
func BenchmarkDaemonMCPRSS(b *testing.B) {
	var plain, one, five float64
	for b.Loop() {
		plain += daemonAfterTurn(b, 0)
		one += daemonAfterTurn(b, 1)
		five += daemonAfterTurn(b, 5)
	}
	n := float64(b.N)
	b.ReportMetric(plain/n/1024, "0mcp-RSS-MiB")
	b.ReportMetric(one/n/1024, "1mcp-RSS-MiB")
	b.ReportMetric(five/n/1024, "5mcp-RSS-MiB")
	b.ReportMetric((five-one)/n/4, "KiB/extra-server")
}

// daemonAfterTurn runs a daemon with servers MCP servers configured, one
// session and one turn, and returns its VmRSS in KiB.
func daemonAfterTurn(b *testing.B, servers int) float64 {
	fm := modeltest.New(b)
	fm.Script(modeltest.Text("ok"))
	root := b.TempDir()
	exe, env := mcptest.Fake(b.TempDir())
	cfg := providerConfig(fm.URL())
	for i := range servers {
		cfg += mcpConfig(fmt.Sprintf("s%d", i), exe, nil, env)
	}
	in := benchInstance(b, root, cfg)
	pid, c, stop := benchDaemon(b, in)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev, err := c.StartSession(ctx, proto.SessionStart{Cwd: in.ws})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Send(&proto.TurnStart{SessionID: ev.SessionID, Prompt: "hi"}); err != nil {
		b.Fatal(err)
	}
	for {
		select {
		case e, ok := <-c.Events():
			if !ok {
				b.Fatal("connection ended")
			}
			switch e := e.(type) {
			case *proto.TurnCompleted:
				time.Sleep(time.Second)
				return procStatusKB(b, pid, "VmRSS")
			case *proto.TurnFailed:
				b.Fatalf("turn failed: %s", e.Message)
			}
		case <-ctx.Done():
			b.Fatal("no turn.completed")
		}
	}
}
