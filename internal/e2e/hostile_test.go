package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/testutil"
)

// TestHostileRepoSkillsStayInside runs `scv exec` in a workspace whose
// skills are links to a credentials file outside it (and to its .env):
// the model request's system prompt lists the repository's real skills
// and nothing of what the links point at.
func TestHostileRepoSkillsStayInside(t *testing.T) {
	const secret = "https://ada:ghp_s3cr3tTOKENvalue@github.com"
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("ok"))
	in := newInstance(t, providerConfig(fm.URL()))
	outside := filepath.Join(filepath.Dir(in.ws), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".git-credentials", "SKILL.md"} {
		if err := os.WriteFile(filepath.Join(outside, f), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Tree(t, filepath.Join("..", "skill", "testdata", "hostile-repo.txtar"), in.ws,
		map[string]string{"SECRET": filepath.Join(outside, ".git-credentials"), "SECRETDIR": outside})
	in.runOK(in.env, "", "exec", "hello")
	reqs := modelRequests(t, fm, 1)
	raw := string(reqs[0].Raw)
	for _, leaked := range []string{"ghp_s3cr3t", "workspace-dotenv-secret"} {
		if strings.Contains(raw, leaked) {
			t.Errorf("the model request holds %q, read through a skill link out of the workspace", leaked)
		}
	}
	if !strings.Contains(raw, "A legitimate skill of the repository") {
		t.Errorf("the real skill is missing from the system prompt:\n%.2000s", raw)
	}
}
