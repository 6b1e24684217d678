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

// BenchmarkRead256K reads a whole 256 KiB file through the read tool
// (plan + os.Root + UTF-8 check + JSON result).
func BenchmarkRead256K(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("abcdefg\n", 256<<10/8)), 0o644); err != nil {
		b.Fatal(err)
	}
	rd := NewRead(Options{})
	args := json.RawMessage(`{"path":"f.txt"}`)
	b.SetBytes(256 << 10)
	for b.Loop() {
		p, err := rd.Plan(tool.Env{Workspace: ws}, args)
		if err != nil {
			b.Fatal(err)
		}
		if res := p.Run(b.Context()); !res.Success || res.Truncated {
			b.Fatalf("%+v", res.Error)
		}
	}
}

// BenchmarkWrite1M replaces a 1 MiB file through the write tool (schema
// validation + temporary file + fsync + rename + directory fsync).
func BenchmarkWrite1M(b *testing.B) {
	ws := b.TempDir()
	content := strings.Repeat("abcdefg\n", 1<<20/8)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	wr := NewWrite(Options{})
	args := json.RawMessage(testutil.JSON(map[string]any{"path": "f.txt", "mode": "replace", "content": content}))
	b.SetBytes(1 << 20)
	for b.Loop() {
		p, err := wr.Plan(tool.Env{Workspace: ws}, args)
		if err != nil {
			b.Fatal(err)
		}
		if res := p.Run(b.Context()); !res.Success {
			b.Fatalf("%+v", res)
		}
	}
}
