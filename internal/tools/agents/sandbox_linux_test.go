package agents

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestSandboxedAgent: a fake delegated agent (with full permissions, the
// case the sandbox matters most for) runs under the sandbox: it completes
// its normal run, and every escape it attempts fails, while the same agent
// unsandboxed breaches each time (so each attempt is real).
func TestSandboxedAgent(t *testing.T) {
	if rep := sandbox.Probe(); !rep.Available {
		t.Skipf("the kernel cannot sandbox: %s", rep.Reason)
	}
	l := testutil.ListenOn(t, "tcp4", "127.0.0.1:0")

	for _, sandboxed := range []bool{false, true} {
		f := newFixture(t, "claude", "FAKEAGENT_STREAM="+abs(t, "testdata/streams/claude/text/stdout.jsonl"))
		root := filepath.Dir(f.workspace)
		outside, hidden := filepath.Join(root, "outside"), filepath.Join(root, "hidden")
		for _, d := range []string{outside, hidden} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(hidden, "key"), []byte("SECRET"), 0o644); err != nil {
			t.Fatal(err)
		}
		attempts := []string{
			"echo x > " + outside + "/new",
			"cat " + hidden + "/key",
			"exec 3<>/dev/tcp/127.0.0.1/" + l.Port(),
			"echo x > " + f.opts.Layout.Home + "/stolen",
		}
		var script strings.Builder
		for i, a := range attempts {
			// Exit 0 means breached.
			script.WriteString("if ( " + a + " ) >/dev/null 2>&1; then echo breached " + strconv.Itoa(i) + "; else echo held " + strconv.Itoa(i) + "; fi >> \"$FAKEAGENT_DIR/attempts\"\n")
		}
		script.WriteString("exec /bin/bash " + f.script + " \"$@\"\n")
		f.opts.Overrides["claude"] = Override{Command: "/bin/bash", Args: []string{"-c", script.String(), "fake"}, Permissions: "full"}
		if sandboxed {
			f.opts.Sandbox = sandbox.Config{Mode: sandbox.ModeWorkspaceWrite, Network: false, WritableRoots: []string{f.out},
				DenyRead: []string{hidden, f.opts.Layout.Home}}
		}
		p, err := f.call(t, "claude", map[string]any{"prompt": "do it"})
		if err != nil {
			t.Fatal(err)
		}
		wantSummary := map[bool]string{false: "Sandbox: not sandboxed\n", true: "Sandbox: sandboxed: workspace-write, no network\n"}[sandboxed]
		if !strings.Contains(p.Summary, wantSummary) {
			t.Errorf("summary lacks %q:\n%s", wantSummary, p.Summary)
		}
		res := p.Run(t.Context())
		if !res.Success {
			t.Fatalf("sandboxed %v: the agent's run failed: %s", sandboxed, res.Output)
		}
		b, err := os.ReadFile(filepath.Join(f.out, "attempts"))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			want := map[bool]string{false: "breached ", true: "held "}[sandboxed] + strconv.Itoa(i)
			if line != want {
				t.Errorf("sandboxed %v: attempt %q: %q, want %q", sandboxed, attempts[i], line, want)
			}
		}
		if n := l.Settled(t); sandboxed && n != 1 {
			t.Errorf("the listener counted %d connections; want the unsandboxed one only", n)
		}
	}
}
