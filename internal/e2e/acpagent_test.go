package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestExecShowsNestedApprovals: `scv exec --yes` delegates to the real
// codex-acp (transport = "acp"); the step Codex asks permission for is
// shown and answered like SCV's own approvals ([codex-N] summary, its
// risk), and the approved step makes its file. One fake server answers
// both SCV's model (gpt-4.1-mini) and Codex's (gpt-5).
func TestExecShowsNestedApprovals(t *testing.T) {
	_, _, dest := mcptest.RequireLockedInstall(t, "internal/tools/agents/acpclient/testdata/npm", ".cache/acpclient-npm",
		"the test with the real codex-acp", "the ACP adapter packages",
		"run .ci/npm-install internal/tools/agents/acpclient/testdata/npm (.ci/run does) to install them into .cache/acpclient-npm")
	bin := filepath.Join(dest, "node_modules", ".bin", "codex-acp")
	fm := modeltest.New(t)
	var mu sync.Mutex
	scv := [][]modeltest.Step{
		{modeltest.ToolCall("d1", "agent_codex", `{"prompt":"make made.txt"}`)},
		{modeltest.Text("delegated")},
	}
	made := ""
	codex := 0
	fm.Respond = func(_ string, raw []byte) []modeltest.Step {
		var body struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		defer mu.Unlock()
		if body.Model == "gpt-5" {
			codex++
			if codex == 1 {
				args, _ := json.Marshal(map[string]string{"cmd": "echo made > " + made, "sandbox_permissions": "require_escalated", "justification": "the task"})
				return []modeltest.Step{modeltest.ToolCall("c1", "exec_command", string(args))}
			}
			return []modeltest.Step{modeltest.Text("made it")}
		}
		if len(scv) == 0 {
			return []modeltest.Step{modeltest.Text("nothing more")}
		}
		steps := scv[0]
		scv = scv[1:]
		return steps
	}
	in := newInstance(t, providerConfig(fm.URL(), "[agents.codex]", fmt.Sprintf("command = %q", bin), `transport = "acp"`))
	made = filepath.Join(in.ws, "made.txt")
	home := filepath.Join(in.home, "adapters", "codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "model = \"gpt-5\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + fm.URL() + "/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_KEY\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	out := in.runWithin(3*time.Minute, in.withEnv("FAKE_MODEL_KEY=sk-fake"), "", "exec", "--yes", "delegate")
	if out.code != 0 {
		t.Fatalf("exit %d\n%s", out.code, out.stderr)
	}
	for _, want := range []string{"scv: approval for agent_codex (risk delegate): approved (--yes)", "scv: approval for agent_codex (risk process): approved (--yes)", "scv:   | [codex-1] echo made > "} {
		if !strings.Contains(out.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out.stderr)
		}
	}
	if !strings.Contains(out.stderr, "echo made > ") {
		t.Errorf("the nested approval does not show the command:\n%s", out.stderr)
	}
	if _, err := os.Stat(made); err != nil {
		t.Errorf("the approved step did not make its file: %v", err)
	}
	if !strings.Contains(out.stdout, "delegated") {
		t.Errorf("stdout %q", out.stdout)
	}
}
