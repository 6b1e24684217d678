package skill

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	skillset "github.com/scv-agent/scv/internal/skill"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestResultsFitTheLimit: a SKILL.md of characters that grow when encoded,
// an unknown name and a name list too long for the limit all fit it, at
// limits down to a few bytes.
func TestResultsFitTheLimit(t *testing.T) {
	base := testutil.TempDir(t)
	ws := filepath.Join(base, "repo")
	testutil.WriteFile(t, filepath.Join(ws, ".scv/skills/ctrl/SKILL.md"), "# Ctrl\n"+strings.Repeat("\x01\n\"", 40000))
	for i := range 30 {
		testutil.WriteFile(t, filepath.Join(ws, fmt.Sprintf(".scv/skills/skill-with-a-long-name-%02d/SKILL.md", i)), "x")
	}
	set, err := skillset.Discover(skillset.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(New(Options{Set: set}))
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{16, 80, 200, 1000, 65536} {
		for _, name := range []string{"ctrl", "skill-with-a-long-name-01", "nope", strings.Repeat("\x01", 5000)} {
			args, _ := json.Marshal(map[string]string{"name": name})
			p, res, ok := reg.Prepare(tool.Env{Workspace: ws, OutputLimit: limit}, "read_skill", args)
			if ok {
				res = p.Run(t.Context())
			}
			testutil.Fits(t, fmt.Sprintf("%.20q at limit %d", name, limit), res, limit)
		}
	}
}
