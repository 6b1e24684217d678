package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// brief is what a test compares of a listed command.
type brief struct {
	Name, Description string
	Source            Source
}

func TestList(t *testing.T) {
	big := "# big\n" + strings.Repeat("x", MaxFileBytes)
	tests := []struct {
		name        string
		user, ws    map[string]string // ws paths are below the workspace root
		want        []brief
		wantSkipped []string // "file: reason substring"
	}{
		{
			name: "description is the first line without its # marks",
			user: map[string]string{"review.md": "## Review the diff\nLook at $ARGUMENTS carefully.\n"},
			want: []brief{{"review", "Review the diff", User}},
		},
		{
			name: "front matter description wins and is not part of the body",
			user: map[string]string{"fm.md": "---\ndescription: \"From front matter\"\nmodel: x\n---\nBody line\n"},
			want: []brief{{"fm", "From front matter", User}},
		},
		{
			name: "workspace command is marked as coming from the repository",
			ws:   map[string]string{".scv/commands/test.md": "Run the tests\n"},
			want: []brief{{"test", "Run the tests", Workspace}},
		},
		{
			name:        "bad names are skipped with the reason",
			user:        map[string]string{"Bad.md": "x\n", "-dash.md": "x\n", "sp ace.md": "x\n", "ok_1-2.md": "fine\n", "notes.txt": "ignored\n"},
			want:        []brief{{"ok_1-2", "fine", User}},
			wantSkipped: []string{"-dash.md: not lower-case", "Bad.md: not lower-case", "sp ace.md: not lower-case"},
		},
		{
			name:        "a file over the size bound is skipped",
			user:        map[string]string{"big.md": big, "small.md": "small\n"},
			want:        []brief{{"small", "small", User}},
			wantSkipped: []string{"big.md: over the limit of 64 KiB"},
		},
		{
			name:        "an empty file or one that is not UTF-8 is skipped",
			user:        map[string]string{"empty.md": "\n\n", "bin.md": "\xff\xfe\x00"},
			wantSkipped: []string{"bin.md: not UTF-8", "empty.md: no prompt text"},
		},
		{
			name:        "the user's command beats the workspace's of the same name",
			user:        map[string]string{"fix.md": "mine\n"},
			ws:          map[string]string{".scv/commands/fix.md": "theirs\n", ".scv/commands/other.md": "other\n"},
			want:        []brief{{"fix", "mine", User}, {"other", "other", Workspace}},
			wantSkipped: []string{"fix.md: your own command /fix has the same name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user, ws := t.TempDir(), t.TempDir()
			write(t, user, tt.user)
			write(t, ws, tt.ws)
			cmds, skipped := List(Dirs{User: user, Workspace: ws})
			var got []brief
			for _, c := range cmds {
				got = append(got, brief{c.Name, c.Description, c.Source})
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
			if len(skipped) != len(tt.wantSkipped) {
				t.Fatalf("skipped %v, want %d: %v", skipped, len(tt.wantSkipped), tt.wantSkipped)
			}
			for i, w := range tt.wantSkipped {
				file, reason, _ := strings.Cut(w, ": ")
				if filepath.Base(skipped[i].File) != file || !strings.Contains(skipped[i].Reason, reason) {
					t.Errorf("skipped[%d] = %s: %s, want %s", i, skipped[i].File, skipped[i].Reason, w)
				}
			}
		})
	}
}

func TestListBoundsFileCount(t *testing.T) {
	user := t.TempDir()
	files := map[string]string{}
	for i := range MaxFiles + 5 {
		files[fmt.Sprintf("c%03d.md", i)] = "cmd\n"
	}
	write(t, user, files)
	cmds, skipped := List(Dirs{User: user})
	if len(cmds) != MaxFiles {
		t.Fatalf("%d commands, want %d", len(cmds), MaxFiles)
	}
	if cmds[MaxFiles-1].Name != fmt.Sprintf("c%03d", MaxFiles-1) {
		t.Errorf("last command %s: not the first %d in name order", cmds[MaxFiles-1].Name, MaxFiles)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "5 command files more than the 200") {
		t.Errorf("skipped %v, want one note of the 5 files over the bound", skipped)
	}
}

// A workspace whose .scv/commands is a symlink out of the workspace has
// no commands: a repository cannot point SCV at files elsewhere.
func TestWorkspaceSymlinkOutIsNotFollowed(t *testing.T) {
	outside, ws := t.TempDir(), t.TempDir()
	write(t, outside, map[string]string{"commands/evil.md": "evil\n", "secret.md": "secret\n"})
	if err := os.Mkdir(filepath.Join(ws, ".scv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "commands"), filepath.Join(ws, ".scv", "commands")); err != nil {
		t.Fatal(err)
	}
	cmds, skipped := List(Dirs{Workspace: ws})
	if len(cmds) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "cannot open the directory") {
		t.Errorf("commands %v, skipped %v: want none and the directory refused", cmds, skipped)
	}
	// A file symlinked out of the commands directory is refused as well.
	ws2 := t.TempDir()
	write(t, ws2, map[string]string{".scv/commands/ok.md": "ok\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws2, ".scv", "commands", "leak.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(Dirs{Workspace: ws2}, "leak"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Find of a symlink out of the directory: %v, want a refusal", err)
	}
	if c, err := Find(Dirs{Workspace: ws2}, "ok"); err != nil || c.Body != "ok\n" {
		t.Errorf("Find(ok) = %+v, %v", c, err)
	}
}

// The user's own directory follows symlinks: a dotfiles manager links
// each command file (or the directory) from a checkout elsewhere.
func TestUserSymlinksAreFollowed(t *testing.T) {
	dotfiles, home := t.TempDir(), t.TempDir()
	write(t, dotfiles, map[string]string{"cmds/linked.md": "Linked command\nbody\n", "cmds/other.md": "Other\nbody\n"})
	user := filepath.Join(home, "commands")
	if err := os.Mkdir(user, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dotfiles, "cmds", "linked.md"), filepath.Join(user, "linked.md")); err != nil {
		t.Fatal(err)
	}
	if c, err := Find(Dirs{User: user}, "linked"); err != nil || c.Description != "Linked command" {
		t.Errorf("Find of a symlinked user command = %+v, %v", c, err)
	}
	linkedDir := filepath.Join(home, "commands2")
	if err := os.Symlink(filepath.Join(dotfiles, "cmds"), linkedDir); err != nil {
		t.Fatal(err)
	}
	if cmds, skipped := List(Dirs{User: linkedDir}); len(cmds) != 2 || len(skipped) != 0 {
		t.Errorf("a symlinked user directory listed %v, skipped %v", cmds, skipped)
	}
}

func TestFind(t *testing.T) {
	user, ws := t.TempDir(), t.TempDir()
	write(t, user, map[string]string{"mine.md": "user body\n"})
	write(t, ws, map[string]string{".scv/commands/mine.md": "repo body\n", ".scv/commands/repo.md": "repo only\n"})
	d := Dirs{User: user, Workspace: ws}
	if c, err := Find(d, "mine"); err != nil || c.Source != User || c.Body != "user body\n" {
		t.Errorf("Find(mine) = %+v, %v; want the user's", c, err)
	}
	if c, err := Find(d, "repo"); err != nil || c.Source != Workspace {
		t.Errorf("Find(repo) = %+v, %v; want the workspace's", c, err)
	}
	if _, err := Find(d, "absent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find(absent) = %v, want ErrNotFound", err)
	}
	if _, err := Find(d, "../mine"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Find(../mine) = %v, want the name refused", err)
	}
}

func TestExpand(t *testing.T) {
	tests := []struct{ body, args, want string }{
		{"Review $ARGUMENTS now.\nAgain: $ARGUMENTS\n", " src/a.go ", "Review src/a.go now.\nAgain: src/a.go\n"},
		{"Review $ARGUMENTS.\n", "", "Review .\n"},
		{"Summarise the repo.\n", "", "Summarise the repo.\n"},
		{"Summarise the repo.\n", "focus on tests", "Summarise the repo.\n\nArguments: focus on tests"},
	}
	for _, tt := range tests {
		if got := (Command{Body: tt.body}).Expand(tt.args); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

// BenchmarkList lists a full directory (MaxFiles commands of 2 KiB each):
// what commands.list costs the server when a session opens.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	body := "# A command\n" + strings.Repeat("Do the thing with $ARGUMENTS carefully.\n", 50)
	for i := range MaxFiles {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%03d.md", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		cmds, _ := List(Dirs{User: dir})
		if len(cmds) != MaxFiles {
			b.Fatalf("%d commands", len(cmds))
		}
	}
}

// A file of exactly MaxFileBytes is used; one byte more is not.
func TestFileSizeBoundary(t *testing.T) {
	user := t.TempDir()
	exact := "# exact\n" + strings.Repeat("y", MaxFileBytes-len("# exact\n"))
	write(t, user, map[string]string{"exact.md": exact, "over.md": exact + "z"})
	cmds, skipped := List(Dirs{User: user})
	if len(cmds) != 1 || cmds[0].Name != "exact" || len(cmds[0].Body) != MaxFileBytes {
		t.Errorf("commands %v: want exact.md whole", cmds)
	}
	if len(skipped) != 1 || filepath.Base(skipped[0].File) != "over.md" {
		t.Errorf("skipped %v: want over.md", skipped)
	}
}
