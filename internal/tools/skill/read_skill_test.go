package skill

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	skillset "github.com/scv-agent/scv/internal/skill"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// fixture discovers a workspace with one project skill dir, a user dir and a
// workspace project skill, plus an outside directory holding "EVIL".
func fixture(t *testing.T) (set *skillset.Set, ws, user, out string) {
	t.Helper()
	base := testutil.TempDir(t)
	ws, user, out = filepath.Join(base, "repo"), filepath.Join(base, "user"), filepath.Join(base, "out")
	testutil.WriteFile(t, filepath.Join(ws, ".scv/skills/release-checks/SKILL.md"), "# Release\nCheck the release.\n")
	testutil.WriteFile(t, filepath.Join(ws, ".scv/skills/other/SKILL.md"), "Other")
	testutil.WriteFile(t, filepath.Join(ws, ".scv/skills/other/extra.md"), "extra")
	testutil.WriteFile(t, filepath.Join(user, "utf/SKILL.md"), "ab\u20accd")
	testutil.WriteFile(t, filepath.Join(ws, "web/.agents/skills/deploy/SKILL.md"), "Deploy")
	testutil.WriteFile(t, filepath.Join(out, "SKILL.md"), "EVIL")
	set, err := skillset.Discover(skillset.Options{Workspace: ws, UserDir: user, ScanProjects: true})
	if err != nil {
		t.Fatal(err)
	}
	return set, ws, user, out
}

func call(t *testing.T, tl tool.Tool, args string) (tool.Plan, tool.Result) {
	t.Helper()
	p, err := tl.Plan(tool.Env{Workspace: t.TempDir()}, json.RawMessage(args))
	if err != nil {
		var te *tool.Error
		if !errors.As(err, &te) {
			t.Fatalf("Plan: %v", err)
		}
		return tool.Plan{}, tool.Result{Error: te.Kind, Output: te.Message}
	}
	return p, p.Run(t.Context())
}

func TestReadSkill(t *testing.T) {
	set, ws, user, _ := fixture(t)
	tests := []struct {
		name    string
		max     int
		args    string
		want    *Result
		kind    tool.ErrorKind
		message []string
	}{
		{"project dir skill", 0, `{"name":"release-checks"}`,
			&Result{Name: "release-checks", Path: filepath.Join(ws, ".scv/skills/release-checks/SKILL.md"), Content: "# Release\nCheck the release.\n"}, "", nil},
		{"user skill", 0, `{"name":"utf"}`,
			&Result{Name: "utf", Path: filepath.Join(user, "utf/SKILL.md"), Content: "ab\u20accd"}, "", nil},
		{"workspace project skill", 0, `{"name":"web:deploy"}`,
			&Result{Name: "web:deploy", Path: filepath.Join(ws, "web/.agents/skills/deploy/SKILL.md"), Content: "Deploy"}, "", nil},
		{"truncated at max_skill_bytes", 3, `{"name":"release-checks"}`,
			&Result{Name: "release-checks", Path: filepath.Join(ws, ".scv/skills/release-checks/SKILL.md"), Content: "# R", Truncated: true}, "", nil},
		{"truncation keeps whole characters", 4, `{"name":"utf"}`,
			&Result{Name: "utf", Path: filepath.Join(user, "utf/SKILL.md"), Content: "ab", Truncated: true}, "", nil},
		{"exactly max_skill_bytes", 5, `{"name":"other"}`,
			&Result{Name: "other", Path: filepath.Join(ws, ".scv/skills/other/SKILL.md"), Content: "Other"}, "", nil},
		{"unknown name", 0, `{"name":"nope"}`, nil, tool.InvalidArguments,
			[]string{`unknown skill "nope"`, "other, release-checks, utf, web:deploy"}},
		{"a path is not a name", 0, `{"name":"../out/SKILL.md"}`, nil, tool.InvalidArguments, []string{"unknown skill"}},
		{"an absolute path is not a name", 0, testutil.JSON(map[string]string{"name": filepath.Join(ws, ".scv/skills/other/extra.md")}), nil, tool.InvalidArguments, []string{"unknown skill"}},
		{"a file inside a skill is not a name", 0, `{"name":"other/extra.md"}`, nil, tool.InvalidArguments, []string{"unknown skill"}},
		{"missing name", 0, `{}`, nil, tool.InvalidArguments, []string{"missing required field `name`"}},
		{"extra path field", 0, `{"name":"other","path":"x"}`, nil, tool.InvalidArguments, []string{"unknown field"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := New(Options{Set: set, MaxBytes: tc.max})
			plan, res := call(t, rs, tc.args)
			if tc.want == nil {
				if res.Success || res.Error != tc.kind {
					t.Fatalf("want %s, got %+v", tc.kind, res)
				}
				for _, m := range tc.message {
					if !strings.Contains(res.Output, m) {
						t.Errorf("message %q lacks %q", res.Output, m)
					}
				}
				return
			}
			if plan.Risk != tool.ReadOnly || !strings.Contains(plan.Summary, tc.want.Name) {
				t.Errorf("risk %q summary %q", plan.Risk, plan.Summary)
			}
			if !res.Success || !res.JSON || res.Truncated != tc.want.Truncated {
				t.Fatalf("got %+v", res)
			}
			var got Result
			if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(*tc.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadSkillUnknownListsAFew(t *testing.T) {
	base := t.TempDir()
	for i := range 15 {
		testutil.WriteFile(t, filepath.Join(base, fmt.Sprintf("s%02d/SKILL.md", i)), "x")
	}
	set, err := skillset.Discover(skillset.Options{Workspace: t.TempDir(), UserDir: base})
	if err != nil {
		t.Fatal(err)
	}
	_, res := call(t, New(Options{Set: set}), `{"name":"zz"}`)
	if res.Error != tool.InvalidArguments || !strings.Contains(res.Output, "s00, s01") || !strings.Contains(res.Output, "s09 (and 5 more)") || strings.Contains(res.Output, "s10") {
		t.Errorf("got %+v", res)
	}
	_, res = call(t, New(Options{}), `{"name":"zz"}`)
	if res.Error != tool.InvalidArguments || !strings.Contains(res.Output, "no skills were discovered") {
		t.Errorf("nil set: got %+v", res)
	}
}

// TestReadSkillContainmentRecheck changes the file system after discovery:
// links leading out of the original root are refused at read time.
func TestReadSkillContainmentRecheck(t *testing.T) {
	tests := []struct {
		name    string
		skill   string
		swap    func(t *testing.T, ws, user, out string)
		ok      string // expected content when the read is still allowed
		message string
	}{
		{"skill directory swapped for a link outside", "release-checks", func(t *testing.T, ws, _, out string) {
			dir := filepath.Join(ws, ".scv/skills/release-checks")
			must(t, os.RemoveAll(dir))
			must(t, os.Symlink(out, dir))
		}, "", "resolves outside its root"},
		{"SKILL.md swapped for a relative link outside", "release-checks", func(t *testing.T, ws, _, out string) {
			p := filepath.Join(ws, ".scv/skills/release-checks/SKILL.md")
			must(t, os.Remove(p))
			rel, _ := filepath.Rel(filepath.Dir(p), filepath.Join(out, "SKILL.md"))
			must(t, os.Symlink(rel, p))
		}, "", "resolves outside its root"},
		{"user skill swapped for an absolute link", "utf", func(t *testing.T, _, user, out string) {
			must(t, os.RemoveAll(filepath.Join(user, "utf")))
			must(t, os.Symlink(out, filepath.Join(user, "utf")))
		}, "", "resolves outside its root"},
		{"whole root swapped for a link", "utf", func(t *testing.T, _, user, out string) {
			must(t, os.Rename(user, user+".old"))
			must(t, os.Symlink(out, user))
		}, "", "was replaced"},
		{"root removed", "utf", func(t *testing.T, _, user, _ string) {
			must(t, os.RemoveAll(user))
		}, "", "cannot be opened"},
		{"SKILL.md linked to another file inside the root", "release-checks", func(t *testing.T, ws, _, _ string) {
			p := filepath.Join(ws, ".scv/skills/release-checks/SKILL.md")
			must(t, os.Remove(p))
			must(t, os.Symlink("../other/extra.md", p))
		}, "extra", ""},
		{"SKILL.md removed", "other", func(t *testing.T, ws, _, _ string) {
			must(t, os.Remove(filepath.Join(ws, ".scv/skills/other/SKILL.md")))
		}, "", "no such file"},
		{"SKILL.md replaced by a directory", "other", func(t *testing.T, ws, _, _ string) {
			p := filepath.Join(ws, ".scv/skills/other/SKILL.md")
			must(t, os.Remove(p))
			must(t, os.Mkdir(p, 0o755))
		}, "", "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, ws, user, out := fixture(t)
			tc.swap(t, ws, user, out)
			_, res := call(t, New(Options{Set: set}), `{"name":"`+tc.skill+`"}`)
			if strings.Contains(res.Output, "EVIL") {
				t.Fatalf("read escaped: %+v", res)
			}
			if tc.ok != "" {
				var got Result
				if !res.Success || json.Unmarshal([]byte(res.Output), &got) != nil || got.Content != tc.ok {
					t.Fatalf("want content %q, got %+v", tc.ok, res)
				}
				return
			}
			if res.Success || res.Error != tool.Failed || !strings.Contains(res.Output, tc.message) {
				t.Errorf("want failure %q, got %+v", tc.message, res)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadSkillFitsOutputLimit(t *testing.T) {
	set, _, _, _ := fixture(t)
	rs := New(Options{Set: set})
	sk, _ := set.Lookup("release-checks")
	head := len(testutil.JSON(Result{Name: sk.Name, Path: filepath.Join(sk.Dir, "SKILL.md"), Truncated: true}))
	for _, limit := range []int{head + 10, head + 11, 100000} {
		p, err := rs.Plan(tool.Env{Workspace: t.TempDir(), OutputLimit: limit}, json.RawMessage(`{"name":"release-checks"}`))
		if err != nil {
			t.Fatal(err)
		}
		res := p.Run(t.Context())
		var got Result
		if !res.Success || len(res.Output) > limit || json.Unmarshal([]byte(res.Output), &got) != nil {
			t.Fatalf("limit %d: %+v", limit, res)
		}
		full := "# Release\nCheck the release.\n"
		if !strings.HasPrefix(full, got.Content) || got.Truncated != (got.Content != full) || res.Truncated != got.Truncated {
			t.Errorf("limit %d: content %q truncated %v", limit, got.Content, got.Truncated)
		}
		if limit == 100000 && got.Content != full {
			t.Errorf("a large limit cut the content: %q", got.Content)
		}
		if limit == head+10 && got.Content != "# Release" {
			t.Errorf("limit head+10 gave %q, want the first 9 characters (the newline takes 2)", got.Content)
		}
	}
}
