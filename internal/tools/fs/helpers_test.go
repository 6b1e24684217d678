package fs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// call plans and runs one call the way the registry and loop do.
func call(t *testing.T, tl tool.Tool, ws, args string) (tool.Plan, tool.Result) {
	t.Helper()
	p, err := tl.Plan(tool.Env{Workspace: ws}, json.RawMessage(args))
	if err != nil {
		var te *tool.Error
		if !errors.As(err, &te) {
			t.Fatalf("Plan(%s): unexpected Go error %v", args, err)
		}
		return tool.Plan{}, tool.Result{Error: te.Kind, Output: te.Message}
	}
	return p, p.Run(t.Context())
}

// tempFiles lists the leftover temporary files under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), TempPrefix) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// besideSecret makes a workspace directory ws and, beside it, a directory
// out holding secret.txt ("SECRET"): what no tool call may read or write.
func besideSecret(t *testing.T) (ws, out string) {
	t.Helper()
	base := t.TempDir()
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	testutil.Files(t, out, map[string]string{"secret.txt": "SECRET"})
	return ws, out
}
