package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestUndoEndToEnd drives `scv undo` through the real binary with no
// daemon: scv exec --yes replaces a.txt and creates b.txt; scv undo
// without --yes on a non-terminal stdin is refused; --yes shows the diff,
// restores a.txt and removes b.txt; a second undo finds nothing.
func TestUndoEndToEnd(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":"a.txt","content":"changed\n","mode":"replace"}`))
	fm.Script(modeltest.ToolCall("c2", "write", `{"path":"b.txt","content":"new file\n","mode":"create"}`))
	fm.Script(modeltest.Text("done"))
	if r := in.run(in.env, "", "exec", "--yes", "edit the files"); r.code != 0 {
		t.Fatalf("exec: exit %d: %s", r.code, r.stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(in.ws, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	if got := read("a.txt"); got != "changed\n" {
		t.Fatalf("a.txt after exec = %q", got)
	}

	r := in.run(in.env, "", "undo")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") || read("a.txt") != "changed\n" {
		t.Fatalf("undo without --yes on a pipe: exit %d, stderr %s, a.txt %q", r.code, r.stderr, read("a.txt"))
	}

	r = in.run(in.env, "", "undo", "--yes")
	if r.code != 0 {
		t.Fatalf("undo --yes: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"restore a.txt", "-changed", "+hello from a.txt", "remove b.txt", "not tracked"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("undo --yes stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "restored a.txt\nremoved b.txt\n" {
		t.Errorf("undo --yes stdout = %q", r.stdout)
	}
	if got := read("a.txt"); got != "hello from a.txt\n" {
		t.Errorf("a.txt after undo = %q", got)
	}
	if _, err := os.Stat(filepath.Join(in.ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after undo: %v, want it removed", err)
	}

	r = in.run(in.env, "", "undo", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to undo") {
		t.Errorf("second undo: exit %d, stderr %s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 3 {
		t.Errorf("the model got %d requests; undo must send none", n)
	}
}
