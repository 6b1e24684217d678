package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestResultsFitTheLimit runs read and write through the Registry, as the
// agent loop does, with outputs that grow when encoded, paths the model
// chose of tens of kilobytes, and limits down to a few bytes: every result
// fits the limit as it is (valid JSON when it is JSON), so the loop never
// has to cut it.
func TestResultsFitTheLimit(t *testing.T) {
	ws := t.TempDir()
	ctrl := strings.Repeat("\x01", 70000)
	testutil.Files(t, ws, map[string]string{"ctrl.txt": ctrl, "mixed.txt": strings.Repeat(mixed, 3000), "d/x.txt": "x"})
	reg, err := tool.NewRegistry(NewRead(Options{}), NewWrite(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	longPath := strings.Repeat("\x01", 30000) + "/f.txt" // a name too long for the file system
	deepPath := strings.Repeat("d/../", 700) + "d/x.txt" // resolves, and is long
	tests := []struct{ name, tool, args string }{
		{"read control bytes", "read", `{"path":"ctrl.txt"}`},
		{"read mixed text", "read", `{"path":"mixed.txt"}`},
		{"read a missing long path", "read", testutil.JSON(map[string]any{"path": longPath})},
		{"read a long path that resolves", "read", testutil.JSON(map[string]any{"path": deepPath})},
		{"read offset past the end", "read", `{"path":"d/x.txt","offset":99}`},
		{"read invalid arguments", "read", testutil.JSON(map[string]any{"path": "x", "nope": strings.Repeat("\x01", 50000)})},
		{"write a long path", "write", testutil.JSON(map[string]any{"path": longPath, "content": "x", "mode": "create"})},
		{"write ok", "write", `{"path":"new/file.txt","content":"hello","mode":"create"}`},
		{"write over an existing file", "write", `{"path":"d/x.txt","content":"hello","mode":"create"}`},
		{"unknown tool", "nope", `{}`},
	}
	for _, limit := range []int{20, 64, 120, 1000, 65536} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				env := tool.Env{Workspace: ws, OutputLimit: limit}
				p, res, ok := reg.Prepare(env, tc.tool, json.RawMessage(tc.args))
				if ok {
					res = p.Run(t.Context())
				}
				testutil.Fits(t, tc.name, res, limit)
				if tc.name == "write ok" && !res.Success {
					t.Errorf("limit %d: the write failed: %+v", limit, res)
				}
			})
		}
		if err := os.RemoveAll(filepath.Join(ws, "new")); err != nil {
			t.Fatal(err)
		}
	}
}
