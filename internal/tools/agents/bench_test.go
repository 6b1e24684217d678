package agents

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/tool"
)

// bigCodexStream builds a ~2 MB codex --json stream from the recorded
// loop10 run: its item events repeated, then its final message and usage.
func bigCodexStream(tb testing.TB) []byte {
	tb.Helper()
	rec, err := os.ReadFile("testdata/streams/codex/loop10/stdout.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.SplitAfter(rec, []byte("\n"))
	head, body, tail := lines[0], lines[1:len(lines)-3], lines[len(lines)-3:]
	var b bytes.Buffer
	b.Write(head)
	for b.Len() < 2<<20 {
		for _, l := range body {
			b.Write(l)
		}
	}
	for _, l := range tail {
		b.Write(l)
	}
	return b.Bytes()
}

func writeStream(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "stream.jsonl")
	if err := os.WriteFile(p, bigCodexStream(b), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkAgentCodex2MB is a whole agent_codex call through SCV (plan,
// record, run, parse, sweep, result) on a fake codex that prints the 2 MB
// stream.
func BenchmarkAgentCodex2MB(b *testing.B) {
	stream := writeStream(b)
	root := b.TempDir()
	script := filepath.Join(root, "fake-codex.sh")
	os.WriteFile(script, []byte(`cat "$FAKE_STREAM"`+"\n"), 0o600)
	tr, err := delegation.New(delegation.Options{Dir: filepath.Join(root, "scv", "run", "delegations")})
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{
		Layout: paths.Layout{Home: filepath.Join(root, "scv")}, UserHome: root,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "FAKE_STREAM=" + stream},
		Overrides: map[string]Override{"codex": {Command: "/bin/bash", Args: []string{script}}},
		Tracker:   tr, InstanceID: "bench",
	}
	tools := Available(opts)
	if len(tools) != 1 {
		b.Fatalf("tools %v", tools)
	}
	env := tool.Env{Workspace: root, SessionID: "s", OutputLimit: DefaultOutputLimit}
	b.SetBytes(2 << 20)
	b.ResetTimer()
	for b.Loop() {
		p, err := tools[0].Plan(env, json.RawMessage(`{"prompt":"go"}`))
		if err != nil {
			b.Fatal(err)
		}
		res := p.Run(b.Context())
		if !res.Success {
			b.Fatalf("%s", res.Output)
		}
	}
}

// BenchmarkCat2MB is the baseline: cat of the same stream through the same
// process runner, output discarded.
func BenchmarkCat2MB(b *testing.B) {
	stream := writeStream(b)
	b.SetBytes(2 << 20)
	b.ResetTimer()
	for b.Loop() {
		if _, err := proc.Run(b.Context(), proc.Spec{Path: "/bin/cat", Args: []string{stream}, Stdout: io.Discard, Timeout: time.Minute}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCodex2MB is the parser alone, fed in 32 KiB chunks as a
// pipe delivers them.
func BenchmarkParseCodex2MB(b *testing.B) {
	data := bigCodexStream(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := newParser(FormatCodex, DefaultOutputLimit)
		for d := data; len(d) > 0; {
			n := min(len(d), 32<<10)
			p.Write(d[:n])
			d = d[n:]
		}
		if out := p.finish(); !out.HaveReply {
			b.Fatal("no reply")
		}
	}
}
