package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
)

// secretLine is the first line of the files the hostile repository points
// at; it must never appear in a description or the prompt section.
const secretLine = "https://ada:ghp_s3cr3tTOKENvalue@github.com"

// hostileRepo builds testdata/hostile-repo.txtar as a workspace next to a
// directory "outside" holding secrets, and returns the workspace.
func hostileRepo(t *testing.T) string {
	t.Helper()
	base := testutil.TempDir(t)
	outside, ws := filepath.Join(base, "outside"), filepath.Join(base, "repo")
	testutil.Files(t, outside, map[string]string{".git-credentials": secretLine + "\n", "SKILL.md": secretLine + "\n"})
	testutil.Tree(t, filepath.Join("testdata", "hostile-repo.txtar"), ws,
		map[string]string{"SECRET": filepath.Join(outside, ".git-credentials"), "SECRETDIR": outside})
	return ws
}

// TestDiscoveryRefusesLinksOutOfItsRoot: SKILL.md files (or skill
// directories) linked out of their skill root — to a file outside the
// workspace, absolute or relative, or to the workspace's .env — are not
// skills; a FIFO does not hang discovery; a link inside the root is
// followed.
func TestDiscoveryRefusesLinksOutOfItsRoot(t *testing.T) {
	ws := hostileRepo(t)
	set, err := Discover(Options{Workspace: ws, ScanProjects: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alias", "good", "repo:fine", "sub:ok"}
	if diff := cmp.Diff(want, set.Names()); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	prompt := set.PromptSection()
	for _, leaked := range []string{"ghp_s3cr3t", "github.com", "workspace-dotenv-secret", "API_TOKEN"} {
		if strings.Contains(prompt, leaked) {
			t.Errorf("the prompt section holds %q from a file outside the skill roots:\n%s", leaked, prompt)
		}
	}
	if sk, _ := set.Lookup("alias"); sk.Description != "A legitimate skill of the repository" {
		t.Errorf("alias description = %q", sk.Description)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".scv/skills/pipe/SKILL.md")); err != nil {
		t.Fatalf("fixture has no FIFO: %v", err)
	}
}
