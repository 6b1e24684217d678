package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestResultsFitTheLimit: for every agent tool, a reply and a stderr tail
// made of characters that grow when encoded, plus a sign-in hint, still
// encode within the output limit as valid JSON, at limits down to a few
// bytes; the reply keeps its beginning.
func TestResultsFitTheLimit(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "grok", "dsh", "pi"} {
		t.Run(agent, func(t *testing.T) {
			f := newFixture(t, agent)
			stream := filepath.Join(t.TempDir(), "stream")
			reply := "REPLY-START " + strings.Repeat("\x01\"\\\n", 3000) + " not logged in"
			if err := os.WriteFile(stream, []byte(reply), 0o600); err != nil {
				t.Fatal(err)
			}
			f.opts.Env = append(f.opts.Env, "FAKEAGENT_STREAM="+stream, "FAKEAGENT_STDERR="+strings.Repeat("\x02", 2048), "FAKEAGENT_EXIT=1")
			reg, err := tool.NewRegistry(f.tool(t, agent))
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{16, 200, 1000, 4000, 65536} {
				env := f.env()
				env.OutputLimit = limit
				args, _ := json.Marshal(map[string]any{"prompt": "work"})
				p, res, ok := reg.Prepare(env, "agent_"+agent, args)
				if ok {
					res = p.Run(t.Context())
				}
				testutil.Fits(t, fmt.Sprintf("limit %d", limit), res, limit)
				var r Result
				if res.JSON && json.Unmarshal([]byte(res.Output), &r) == nil && limit >= 1000 && limit <= 4000 {
					if !strings.HasPrefix(r.Reply, "REPLY-START") || !r.Truncated {
						t.Errorf("limit %d: reply %.40q truncated %v; want its beginning and truncated", limit, r.Reply, r.Truncated)
					}
				}
			}
		})
	}
}
