package config

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const userRules = `# my rules
[[approvals.rules]]
tool = "bash"
prefix = "go  test"
decision = "allow"

[[approvals.rules]] # docs only
tool = "web_fetch"
domain = "pkg.go.dev"
decision = "allow"
workspace = "/home/me/src"
`

// TestApprovalRulesLoad: rules of the user config and deny rules of the
// workspace add up, each with its file and line.
func TestApprovalRulesLoad(t *testing.T) {
	f := newFixture(t)
	user := f.user(t, userRules)
	proj := f.project(t, "[[approvals.rules]]\ntool = \"bash\"\nprefix = \"git push\"\ndecision = \"deny\"\n")
	l := mustLoad(t, f.opts())
	want := []ApprovalRule{
		{Tool: "bash", Prefix: "go  test", Decision: "allow", Source: user, Line: 2},
		{Tool: "web_fetch", Domain: "pkg.go.dev", Decision: "allow", Workspace: "/home/me/src", Source: user, Line: 7},
		{Tool: "bash", Prefix: "git push", Decision: "deny", Source: proj, Line: 1},
	}
	if d := cmp.Diff(want, l.Config.Approvals.Rules); d != "" {
		t.Fatalf("rules (-want +got):\n%s", d)
	}
	gs := l.Config.Approvals.Grants()
	if len(gs) != 3 || gs[0].Prefix != "go test" || gs[0].Source != user+":2" || !gs[2].Deny || gs[1].Workspace != "/home/me/src" {
		t.Fatalf("grants %+v", gs)
	}
	shown := ""
	for _, s := range l.Explain() {
		if s.Key == "approvals.rules" {
			shown = s.Value
		}
	}
	if !strings.Contains(shown, `{ tool = "bash", prefix = "go  test", decision = "allow" } (`+user+`:2)`) || !strings.Contains(shown, proj+":1") {
		t.Errorf("config show: %s", shown)
	}
}

// TestWorkspaceAllowRuleRefused: a workspace config's allow rule is a load
// error naming the file, the line and the key; so are invalid rules.
func TestWorkspaceAllowRuleRefused(t *testing.T) {
	probs := projectProblems(t, "", "[[approvals.rules]]\ntool = \"bash\"\nprefix = \"git push\"\ndecision = \"deny\"\n\n[[approvals.rules]]\ntool = \"bash\"\nprefix = \"make\"\ndecision = \"allow\"\n")
	if len(probs) != 1 || probs[0].Source != "P" || probs[0].Line != 6 || probs[0].Key != "approvals.rules" || !strings.Contains(probs[0].Msg, "a workspace config may add deny rules only") {
		t.Fatalf("workspace allow rule: %+v", probs)
	}
	for body, want := range map[string]string{
		"[[approvals.rules]]\ntool = \"bash\"\ndecision = \"allow\"\n":                                       "needs a command prefix",
		"[[approvals.rules]]\ntool = \"bash\"\nprefix = \"go test $(x)\"\ndecision = \"allow\"\n":            "is not plain",
		"[[approvals.rules]]\ntool = \"bash\"\nprefix = \"python3\"\ndecision = \"allow\"\n":                 "is an interpreter",
		"[[approvals.rules]]\ntool = \"write\"\npath = \".git/hooks/\"\ndecision = \"allow\"\n":              "is guarded",
		"[[approvals.rules]]\ntool = \"bash\"\nprefix = \"go\"\ndecision = \"maybe\"\n":                      `decision "maybe" is not "allow" or "deny"`,
		"[[approvals.rules]]\ntool = \"bash\"\nprefix = \"go\"\ndecision = \"allow\"\nworkspace = \"src\"\n": "not a clean absolute directory",
		"[[approvals.rules]]\ntool = \"bash\"\nprefx = \"go\"\n":                                             "prefx",
	} {
		f := newFixture(t)
		path := f.user(t, body)
		_, err := Load(f.opts())
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path+":") {
			t.Errorf("%q: %v; want an error at %s naming %q", body, err, path, want)
		}
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSaveRuleKeepsTheFile: the rule is appended; every byte of the old
// text (comments included) is kept, and the result loads with the rule.
func TestSaveRuleKeepsTheFile(t *testing.T) {
	f := newFixture(t)
	old := "# keep me\n[agent]\nmax_steps = 7 # and me\n" + "[[approvals.rules]]\ntool = \"write\"\npath = \"docs/\"\ndecision = \"allow\""
	path := f.user(t, old)
	r, err := SaveRule(path, ApprovalRule{Tool: "bash", Prefix: "go test", Decision: DecisionAllow, Workspace: f.ws}, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := readString(t, path)
	if !strings.HasPrefix(got, old+"\n") {
		t.Fatalf("old text not kept:\n%s", got)
	}
	lines := strings.Split(got, "\n")
	if r.Source != path || lines[r.Line-1] != "[[approvals.rules]]" {
		t.Fatalf("rule at %s:%d, file:\n%s", r.Source, r.Line, got)
	}
	l := mustLoad(t, f.opts())
	if rs := l.Config.Approvals.Rules; len(rs) != 2 || rs[1].Prefix != "go test" || rs[1].Workspace != f.ws || rs[1].Line != r.Line || l.Config.Agent.MaxSteps != 7 {
		t.Fatalf("reloaded %+v", rs)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	// A missing file is created.
	f2 := newFixture(t)
	if _, err := SaveRule(f2.home.ConfigFile(), ApprovalRule{Tool: "web_fetch", Domain: "pkg.go.dev", Decision: DecisionAllow}, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if rs := mustLoad(t, f2.opts()).Config.Approvals.Rules; len(rs) != 1 || rs[0].Line != 2 {
		t.Fatalf("new file: %+v", rs)
	}
}

// TestSaveRuleRefuses: a file that does not load, a concurrent change and
// an invalid rule leave the file as it was.
func TestSaveRuleRefuses(t *testing.T) {
	f := newFixture(t)
	rule := ApprovalRule{Tool: "bash", Prefix: "go test", Decision: DecisionAllow}
	for body, want := range map[string]string{
		"[agent\nmax_steps = 3\n":                    "does not load",
		"[approvals]\nrules = []\n":                  "would not load with the rule",
		"[tools]\napproval_policy = \"sometimes\"\n": "does not load",
	} {
		path := f.user(t, body)
		if _, err := SaveRule(path, rule, SaveOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
		if readString(t, path) != body {
			t.Errorf("%q: the file changed", body)
		}
	}
	if _, err := SaveRule(f.home.ConfigFile(), ApprovalRule{Tool: "write", Path: ".git/", Decision: DecisionAllow}, SaveOptions{}); err == nil || !strings.Contains(err.Error(), "guarded") {
		t.Errorf("a guarded rule: %v", err)
	}

	// Someone edits the file while the rule is being written: the edit
	// stays, the rule is not written, no temporary file is left.
	path := f.user(t, "# v1\n")
	edit := "# v2, edited meanwhile\n"
	_, err := SaveRule(path, rule, SaveOptions{beforeRename: func(string) { writeFile(t, path, edit, 0o600) }})
	if !errors.Is(err, ErrConfigChanged) {
		t.Fatalf("concurrent edit: %v", err)
	}
	if got := readString(t, path); got != edit {
		t.Fatalf("file after a refused save: %q", got)
	}
	assertNoTemp(t, filepath.Dir(path))
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestSaveRuleOnlyRenamePublishes: until the rename, the file holds the
// old text whole while the complete new text waits in the temporary file.
func TestSaveRuleOnlyRenamePublishes(t *testing.T) {
	f := newFixture(t)
	old := "# old\n[agent]\nmax_steps = 9\n"
	path := f.user(t, old)
	var during, tmpText string
	_, err := SaveRule(path, ApprovalRule{Tool: "bash", Prefix: "make", Decision: DecisionAllow}, SaveOptions{beforeRename: func(tmp string) {
		during, tmpText = readString(t, path), readString(t, tmp)
		if filepath.Dir(tmp) != filepath.Dir(path) {
			t.Errorf("temporary file %s is not beside %s (a rename across file systems is not atomic)", tmp, path)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if during != old || tmpText != readString(t, path) || !strings.HasPrefix(tmpText, old) {
		t.Fatalf("during: %q; temp: %q; after: %q", during, tmpText, readString(t, path))
	}
}

// TestSaveRuleKilled: a process killed (SIGKILL) while saving leaves the
// old file whole: the new text never appears half written.
func TestSaveRuleKilled(t *testing.T) {
	if dir := os.Getenv("SCV_TEST_SAVE_RULE_DIR"); dir != "" {
		// The child: save, and stop just before the rename for the
		// parent to kill.
		path := filepath.Join(dir, "config.toml")
		_, err := SaveRule(path, ApprovalRule{Tool: "bash", Prefix: "make", Decision: DecisionAllow}, SaveOptions{beforeRename: func(tmp string) {
			os.WriteFile(filepath.Join(dir, "ready"), []byte(tmp), 0o600)
			time.Sleep(time.Minute)
		}})
		t.Fatalf("not killed: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	old := strings.Repeat("# a long comment line that makes the file bigger than one write\n", 2000)
	writeFile(t, path, old, 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveRuleKilled$")
	cmd.Env = append(os.Environ(), "SCV_TEST_SAVE_RULE_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the child never reached the rename")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, []byte(old)) {
		t.Fatalf("after the kill the file is %d bytes (%v), want the old %d", len(got), err, len(old))
	}
	// The next save works and leaves a file that loads.
	if _, err := SaveRule(path, ApprovalRule{Tool: "bash", Prefix: "make", Decision: DecisionAllow}, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(readString(t, path), old) {
		t.Fatal("old text lost")
	}
}

// TestSaveRuleThroughALink: a user config that is a symbolic link stays
// one; the file it names gets the rule.
func TestSaveRuleThroughALink(t *testing.T) {
	f := newFixture(t)
	real := writeFile(t, filepath.Join(f.dir, "dotfiles", "scv.toml"), "# in my dotfiles\n", 0o600)
	if err := os.Symlink(real, f.home.ConfigFile()); err != nil {
		t.Fatal(err)
	}
	r, err := SaveRule(f.home.ConfigFile(), ApprovalRule{Tool: "bash", Prefix: "make", Decision: DecisionAllow}, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(f.home.ConfigFile()); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", st.Mode(), err)
	}
	if got := readString(t, real); !strings.HasPrefix(got, "# in my dotfiles\n") || !strings.Contains(got, `prefix = "make"`) {
		t.Fatalf("the linked file: %q", got)
	}
	if r.Source != f.home.ConfigFile() {
		t.Errorf("source %q", r.Source)
	}
	assertNoTemp(t, filepath.Dir(real))
}
