package fs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// files is a description of a directory tree: path → content, or a value
// starting with "->" for a symbolic link, or "/" suffix key for a directory.
func makeTree(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			if err := os.Symlink(strings.TrimPrefix(content, "->"), p); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
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
