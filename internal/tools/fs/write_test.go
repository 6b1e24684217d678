package fs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func writeWorkspace(t *testing.T) (ws, out string) {
	t.Helper()
	ws, out = besideSecret(t)
	testutil.Files(t, ws, map[string]string{
		"old.txt":          "old content",
		"dir/":             "",
		"link-in":          "->old.txt",
		"link-in-dir":      "->dir",
		"dangling":         "->missing.txt",
		"link-out-abs":     "->" + filepath.Join(out, "secret.txt"),
		"link-out-rel":     "->../outside/secret.txt",
		"link-out-dir-abs": "->" + out,
		"link-out-dir-rel": "->../outside",
		"link-out-new":     "->../outside/new.txt",
	})
	if err := os.Chmod(filepath.Join(ws, "old.txt"), 0o751); err != nil {
		t.Fatal(err)
	}
	return ws, out
}

func TestWrite(t *testing.T) {
	wr := NewWrite(Options{MaxWriteBytes: 32})
	const inside = "must stay inside the workspace"
	type disk map[string]string // workspace file → expected content ("" key absent: not checked)
	tests := []struct {
		name    string
		args    map[string]any
		want    *WriteResult
		kind    tool.ErrorKind
		message []string
		files   disk // expected content afterwards; "<absent>" for missing
		perm    map[string]os.FileMode
	}{
		{"create", map[string]any{"path": "new.txt", "content": "fresh", "mode": "create"},
			&WriteResult{Path: "new.txt", Bytes: 5, SHA256: sha("fresh")}, "", nil, disk{"new.txt": "fresh"}, nil},
		{"create empty", map[string]any{"path": "empty.txt", "content": "", "mode": "create"},
			&WriteResult{Path: "empty.txt", Bytes: 0, SHA256: sha("")}, "", nil, disk{"empty.txt": ""}, nil},
		{"create makes parents", map[string]any{"path": "a/b/c/new.txt", "content": "deep", "mode": "create"},
			&WriteResult{Path: "a/b/c/new.txt", Bytes: 4, SHA256: sha("deep")}, "", nil, disk{"a/b/c/new.txt": "deep"}, nil},
		{"create through a symlinked directory inside", map[string]any{"path": "link-in-dir/x.txt", "content": "x", "mode": "create"},
			&WriteResult{Path: "link-in-dir/x.txt", Bytes: 1, SHA256: sha("x")}, "", nil, disk{"dir/x.txt": "x"}, nil},
		{"create over an existing file", map[string]any{"path": "old.txt", "content": "clobber", "mode": "create"},
			nil, tool.Failed, []string{`"old.txt" already exists`, "use mode replace"}, disk{"old.txt": "old content"}, nil},
		{"create over an existing symlink", map[string]any{"path": "link-in", "content": "clobber", "mode": "create"},
			nil, tool.Failed, []string{"already exists"}, disk{"old.txt": "old content"}, nil},
		{"create over a dangling symlink", map[string]any{"path": "dangling", "content": "clobber", "mode": "create"},
			nil, tool.Failed, []string{"already exists"}, disk{"missing.txt": "<absent>"}, nil},
		{"create over a symlink leading outside", map[string]any{"path": "link-out-new", "content": "clobber", "mode": "create"},
			nil, tool.Failed, []string{"already exists"}, nil, nil},
		{"replace", map[string]any{"path": "old.txt", "content": "new content", "mode": "replace"},
			&WriteResult{Path: "old.txt", Bytes: 11, SHA256: sha("new content")}, "", nil, disk{"old.txt": "new content"}, map[string]os.FileMode{"old.txt": 0o751}},
		{"replace with a matching hash", map[string]any{"path": "old.txt", "content": "v2", "mode": "replace", "expected_sha256": sha("old content")},
			&WriteResult{Path: "old.txt", Bytes: 2, SHA256: sha("v2")}, "", nil, disk{"old.txt": "v2"}, map[string]os.FileMode{"old.txt": 0o751}},
		{"replace with an upper-case hash", map[string]any{"path": "old.txt", "content": "v2", "mode": "replace", "expected_sha256": strings.ToUpper(sha("old content"))},
			&WriteResult{Path: "old.txt", Bytes: 2, SHA256: sha("v2")}, "", nil, disk{"old.txt": "v2"}, nil},
		{"replace with a stale hash", map[string]any{"path": "old.txt", "content": "v2", "mode": "replace", "expected_sha256": sha("older")},
			nil, tool.Failed, []string{"changed since it was read", sha("older"), sha("old content")}, disk{"old.txt": "old content"}, nil},
		{"replace of a missing file", map[string]any{"path": "missing.txt", "content": "x", "mode": "replace"},
			nil, tool.Failed, []string{`"missing.txt" does not exist`, "use mode create"}, disk{"missing.txt": "<absent>"}, nil},
		{"replace of a missing file in a missing directory", map[string]any{"path": "nodir/missing.txt", "content": "x", "mode": "replace"},
			nil, tool.Failed, []string{"does not exist"}, disk{"nodir": "<absent>"}, nil},
		{"replace of a symlink", map[string]any{"path": "link-in", "content": "x", "mode": "replace"},
			nil, tool.Failed, []string{"symbolic link", "old.txt"}, disk{"old.txt": "old content"}, nil},
		{"replace of a directory", map[string]any{"path": "dir", "content": "x", "mode": "replace"},
			nil, tool.Failed, []string{"a directory"}, nil, nil},
		{"content over max_write_bytes", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 33), "mode": "create"},
			nil, tool.Limit, []string{"33 bytes", "max_write_bytes (32)"}, disk{"big.txt": "<absent>"}, nil},
		{"content at max_write_bytes", map[string]any{"path": "max.txt", "content": strings.Repeat("x", 32), "mode": "create"},
			&WriteResult{Path: "max.txt", Bytes: 32, SHA256: sha(strings.Repeat("x", 32))}, "", nil, nil, nil},
		{"missing mode", map[string]any{"path": "n.txt", "content": "x"},
			nil, tool.InvalidArguments, []string{"missing required field `mode`"}, nil, nil},
		{"unknown mode", map[string]any{"path": "n.txt", "content": "x", "mode": "append"},
			nil, tool.InvalidArguments, []string{"append", "create", "replace"}, nil, nil},
		{"hash with create", map[string]any{"path": "n.txt", "content": "x", "mode": "create", "expected_sha256": sha("")},
			nil, tool.InvalidArguments, []string{"replace only"}, disk{"n.txt": "<absent>"}, nil},
		{"malformed hash", map[string]any{"path": "old.txt", "content": "x", "mode": "replace", "expected_sha256": "abc"},
			nil, tool.InvalidArguments, []string{"expected_sha256"}, disk{"old.txt": "old content"}, nil},
		{"absolute path", map[string]any{"path": "/tmp/scv-test-never.txt", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"dot-dot escape", map[string]any{"path": "../outside/new.txt", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"create through a directory symlink, absolute target outside", map[string]any{"path": "link-out-dir-abs/new.txt", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"create through a directory symlink, relative target outside", map[string]any{"path": "link-out-dir-rel/new.txt", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"create parents through a symlink outside", map[string]any{"path": "link-out-dir-rel/a/b.txt", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"replace through a directory symlink outside", map[string]any{"path": "link-out-dir-abs/secret.txt", "content": "x", "mode": "replace"},
			nil, tool.InvalidArguments, []string{inside}, nil, nil},
		{"replace of a file symlink outside", map[string]any{"path": "link-out-rel", "content": "x", "mode": "replace"},
			nil, tool.Failed, []string{"symbolic link"}, nil, nil},
		{"parent is a file", map[string]any{"path": "old.txt/x", "content": "x", "mode": "create"},
			nil, tool.Failed, []string{"not a directory"}, disk{"old.txt": "old content"}, nil},
		{"reserved temporary name", map[string]any{"path": "dir/" + TempPrefix + "x", "content": "x", "mode": "create"},
			nil, tool.InvalidArguments, []string{"reserved prefix"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, out := writeWorkspace(t)
			plan, res := call(t, wr, ws, testutil.JSON(tc.args))
			if tc.want != nil {
				if !res.Success || !res.JSON {
					t.Fatalf("want success, got %+v", res)
				}
				if plan.Risk != tool.Filesystem || !strings.Contains(plan.Summary, tc.want.Path) {
					t.Errorf("plan risk %q summary %q", plan.Risk, plan.Summary)
				}
				var got WriteResult
				if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(*tc.want, got); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
			} else {
				if res.Success || res.Error != tc.kind {
					t.Fatalf("want failure %q, got %+v", tc.kind, res)
				}
				for _, m := range tc.message {
					if !strings.Contains(res.Output, m) {
						t.Errorf("message %q lacks %q", res.Output, m)
					}
				}
			}
			for name, want := range tc.files {
				b, err := os.ReadFile(filepath.Join(ws, name))
				got := string(b)
				if err != nil {
					got = "<absent>"
				}
				if got != want {
					t.Errorf("%s holds %q, want %q", name, got, want)
				}
			}
			for name, want := range tc.perm {
				fi, err := os.Stat(filepath.Join(ws, name))
				if err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s mode %v (%v), want %v", name, fi.Mode().Perm(), err, want)
				}
			}
			if got := readString(t, filepath.Join(out, "secret.txt")); got != "SECRET" {
				t.Errorf("outside file changed: %q", got)
			}
			if _, err := os.Lstat(filepath.Join(out, "new.txt")); err == nil {
				t.Error("a file appeared outside the workspace")
			}
			if left := tempFiles(t, filepath.Dir(ws)); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestWriteRaces changes the target while the temporary file is being
// written: create must not clobber a file that appeared meanwhile, and
// expected_sha256 is checked against the file as it is just before install.
func TestWriteRaces(t *testing.T) {
	content := strings.Repeat("n", 3*chunkSize)
	tests := []struct {
		name    string
		setup   string // initial content of f.txt, "" for none
		args    map[string]any
		meddle  func(p string) error
		message []string
		want    string
	}{
		{"file appears during create", "", map[string]any{"path": "f.txt", "content": content, "mode": "create"},
			func(p string) error { return os.WriteFile(p, []byte("theirs"), 0o644) },
			[]string{"appeared while writing", "use mode replace"}, "theirs"},
		{"file changes during replace", "mine", map[string]any{"path": "f.txt", "content": content, "mode": "replace", "expected_sha256": sha("mine")},
			func(p string) error { return os.WriteFile(p, []byte("theirs"), 0o644) },
			[]string{sha("mine"), sha("theirs")}, "theirs"},
		{"file removed during replace", "mine", map[string]any{"path": "f.txt", "content": content, "mode": "replace"},
			os.Remove, []string{"does not exist"}, "<absent>"},
		{"file becomes a symlink during replace", "mine", map[string]any{"path": "f.txt", "content": content, "mode": "replace"},
			func(p string) error {
				if err := os.Remove(p); err != nil {
					return err
				}
				return os.Symlink("/etc/passwd", p)
			}, []string{"symbolic link"}, "<symlink>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			target := filepath.Join(ws, "f.txt")
			if tc.setup != "" {
				testutil.Files(t, ws, map[string]string{"f.txt": tc.setup})
			}
			var once sync.Once
			wr := newWrite(Options{}, func() {
				once.Do(func() {
					if err := tc.meddle(target); err != nil {
						t.Error(err)
					}
				})
			})
			_, res := call(t, wr, ws, testutil.JSON(tc.args))
			if res.Success || res.Error != tool.Failed {
				t.Fatalf("want failure, got %+v", res)
			}
			for _, m := range tc.message {
				if !strings.Contains(res.Output, m) {
					t.Errorf("message %q lacks %q", res.Output, m)
				}
			}
			got := "<absent>"
			if fi, err := os.Lstat(target); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				got = "<symlink>"
			} else if err == nil {
				got = readString(t, target)
			}
			if got != tc.want {
				t.Errorf("target holds %q, want %q", got, tc.want)
			}
			if left := tempFiles(t, ws); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestWriteCancelled(t *testing.T) {
	ws := t.TempDir()
	testutil.Files(t, ws, map[string]string{"f.txt": "old"})
	ctx, cancel := contextWithCancel(t)
	wr := newWrite(Options{}, cancel)
	p, err := wr.Plan(tool.Env{Workspace: ws}, json.RawMessage(testutil.JSON(map[string]any{"path": "f.txt", "mode": "replace", "content": strings.Repeat("x", 3*chunkSize)})))
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run(ctx)
	if res.Error != tool.Cancelled {
		t.Fatalf("want cancelled, got %+v", res)
	}
	if got := readString(t, filepath.Join(ws, "f.txt")); got != "old" {
		t.Errorf("file holds %q after a cancelled write", got)
	}
	if left := tempFiles(t, ws); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestWriteSymlinkSwappedDuringCalls swaps a directory symlink between an
// inside and an outside target while creates run through it: nothing may
// ever land outside.
func TestWriteSymlinkSwappedDuringCalls(t *testing.T) {
	base := t.TempDir()
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	testutil.Files(t, ws, map[string]string{"sub": "->real", "real/": ""})
	testutil.Files(t, out, map[string]string{"keep.txt": "x"})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { swapLoop(t, ws, out, stop) })
	wr := NewWrite(Options{})
	seen := map[string]int{}
	for i := range 300 {
		_, res := call(t, wr, ws, testutil.JSON(map[string]any{"path": "sub/f" + strings.Repeat("x", i%3) + ".txt", "content": "c", "mode": "create"}))
		seen[string(res.Error)]++
		_ = os.Remove(filepath.Join(ws, "real", "f"+strings.Repeat("x", i%3)+".txt"))
	}
	close(stop)
	wg.Wait()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files appeared outside the workspace: %v", entries)
	}
	t.Logf("outcomes: %v", seen)
}
