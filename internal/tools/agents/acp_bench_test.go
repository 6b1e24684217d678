package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/tool"
)

// BenchmarkACPvsPrint runs the same fake-model task (one text reply from
// the scripted Anthropic server) through Claude Code in print mode (the
// CLI of the pinned claude-agent-sdk, `node cli.js -p`) and through
// claude-agent-acp: a fresh call (a new conversation: a new adapter) and a
// follow-up on one conversation (the adapter already running). It reports
// the wall time per call and the peak resident memory of every process
// the benchmark started (sampled every 20 ms).
func BenchmarkACPvsPrint(b *testing.B) {
	bin := requireACPAdapter(b, "claude-agent-acp")
	node, cli := "", filepath.Join(filepath.Dir(filepath.Dir(bin)), "@anthropic-ai", "claude-agent-sdk", "cli.js")
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(dir, "node"); node == "" && isExec(p) {
			node = p
		}
	}
	fake := modeltest.New(b)
	fake.Respond = func(string, []byte) []modeltest.Step { return []modeltest.Step{modeltest.Text("done")} }
	run := func(b *testing.B, o Override, followUp bool) {
		tl, env, pool := benchClaude(b, o, fake.URL())
		defer pool.Close()
		args := `{"prompt":"say done"}`
		if followUp {
			first := benchCall(b, tl, env, args)
			args = `{"prompt":"again","session":"` + first.Session + `"}`
		}
		peak := sampleRSS()
		start := time.Now()
		for b.Loop() {
			if r := benchCall(b, tl, env, args); !strings.Contains(r.Reply, "done") {
				b.Fatalf("reply %q", r.Reply)
			}
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/call")
		b.ReportMetric(float64(peak())/1024, "peak-RSS-MB")
	}
	b.Run("print-fresh", func(b *testing.B) { run(b, Override{Command: node, Args: []string{cli, "-p"}}, false) })
	b.Run("print-followup", func(b *testing.B) { run(b, Override{Command: node, Args: []string{cli, "-p"}}, true) })
	b.Run("acp-fresh", func(b *testing.B) { run(b, Override{Command: bin, Transport: TransportACP}, false) })
	b.Run("acp-followup", func(b *testing.B) { run(b, Override{Command: bin, Transport: TransportACP}, true) })
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func benchClaude(b *testing.B, o Override, url string) (tool.Tool, tool.Env, *ACPPool) {
	b.Helper()
	root := b.TempDir()
	tr, err := delegation.New(delegation.Options{Dir: filepath.Join(root, "scv", "run", "delegations")})
	if err != nil {
		b.Fatal(err)
	}
	pool := NewACPPool(1, 0) // a fresh call's adapter replaces the last one
	opts := Options{
		Layout: paths.Layout{Home: filepath.Join(root, "scv")}, UserHome: root,
		Env:       []string{"PATH=" + os.Getenv("PATH")},
		Overrides: map[string]Override{"claude": o},
		Tracker:   tr, InstanceID: "bench", ACP: pool,
		Conversations: delegation.NewRegistry(delegation.RegistryOptions{Max: 1 << 20}),
	}
	settings, _ := json.Marshal(map[string]any{"env": map[string]string{"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-fake"}})
	writeFile(b, filepath.Join(opts.Layout.Adapter("claude"), ".claude", "settings.json"), string(settings))
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	tools := Available(opts)
	if len(tools) != 1 {
		b.Fatalf("tools %v", tools)
	}
	return tools[0], tool.Env{Workspace: ws, SessionID: "s", CallID: "c", OutputLimit: DefaultOutputLimit}, pool
}

// sampleRSS samples the summed resident memory (KiB) of this process's
// descendants until the returned function is called, which gives the peak.
func sampleRSS() func() int64 {
	var mu sync.Mutex
	var peak int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if n := descendantsRSS(os.Getpid()); n > 0 {
				mu.Lock()
				peak = max(peak, n)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// descendantsRSS sums VmRSS of every descendant of root.
func descendantsRSS(root int) int64 {
	ents, _ := os.ReadDir("/proc")
	parent, rss := map[int]int{}, map[int]int64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "PPid:":
				parent[pid], _ = strconv.Atoi(f[1])
			case len(f) >= 2 && f[0] == "VmRSS:":
				rss[pid], _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	var sum int64
	for pid, kb := range rss {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				sum += kb
				break
			}
		}
	}
	return sum
}
