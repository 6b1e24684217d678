package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/tool"
)

// benchConvTool is agent_codex on the conversation-keeping fake (convAgent)
// with a registry of its own.
func benchConvTool(b *testing.B) (tool.Tool, tool.Env) {
	b.Helper()
	root := b.TempDir()
	script := filepath.Join(root, "fake-codex.sh")
	if err := os.WriteFile(script, []byte(convAgent), 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(root, "out")
	os.Mkdir(out, 0o755)
	tr, err := delegation.New(delegation.Options{Dir: filepath.Join(root, "scv", "run", "delegations")})
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{
		Layout: paths.Layout{Home: filepath.Join(root, "scv")}, UserHome: root,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "FAKEAGENT_DIR=" + out, "FAKEAGENT_KIND=codex"},
		Overrides: map[string]Override{"codex": {Command: "/bin/bash", Args: []string{script}}},
		Tracker:   tr, InstanceID: "bench",
		Conversations: delegation.NewRegistry(delegation.RegistryOptions{Max: 1 << 20}),
	}
	tools := Available(opts)
	if len(tools) != 1 {
		b.Fatalf("tools %v", tools)
	}
	return tools[0], tool.Env{Workspace: root, SessionID: "s", CallID: "c", OutputLimit: DefaultOutputLimit}
}

func benchCall(b *testing.B, tl tool.Tool, env tool.Env, args string) Result {
	p, err := tl.Plan(env, json.RawMessage(args))
	if err != nil {
		b.Fatal(err)
	}
	res := p.Run(b.Context())
	var r Result
	if err := json.Unmarshal([]byte(res.Output), &r); err != nil || !res.Success {
		b.Fatalf("%s", res.Output)
	}
	return r
}

// BenchmarkConversationFresh is a call that starts a new conversation
// (the fake prints its thread id; SCV records the conversation).
func BenchmarkConversationFresh(b *testing.B) {
	tl, env := benchConvTool(b)
	for b.Loop() {
		benchCall(b, tl, env, `{"prompt":"go"}`)
	}
}

// BenchmarkConversationFollowUp is a call continuing one conversation:
// the registry's checks at Plan and Run, the resume argv, the turn
// recorded.
func BenchmarkConversationFollowUp(b *testing.B) {
	tl, env := benchConvTool(b)
	first := benchCall(b, tl, env, `{"prompt":"go"}`)
	args := `{"prompt":"go on","session":"` + first.Session + `"}`
	for b.Loop() {
		benchCall(b, tl, env, args)
	}
}

// BenchmarkParseProgress is the parser with and without progress lines,
// per MB of each CLI's ten-step recording repeated to about 2 MB.
func BenchmarkParseProgress(b *testing.B) {
	for _, agent := range []string{"claude", "codex", "pi"} {
		rec, err := os.ReadFile(filepath.Join("testdata", "streams", agent, "loop10", "stdout.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		var data []byte
		for len(data) < 2<<20 {
			data = append(data, rec...)
		}
		d, _ := Lookup(agent)
		for _, withProgress := range []bool{false, true} {
			name := agent + "/plain"
			if withProgress {
				name = agent + "/progress"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				lines := 0
				for b.Loop() {
					p := newParser(d.Format, DefaultOutputLimit)
					if withProgress {
						p.progress = func(string) { lines++ }
					}
					for rest := data; len(rest) > 0; {
						n := min(len(rest), 32<<10)
						p.Write(rest[:n])
						rest = rest[n:]
					}
					p.finish()
				}
				if withProgress && lines == 0 {
					b.Fatal("no progress lines")
				}
			})
		}
	}
}
