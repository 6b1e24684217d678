package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestFunctionLengths keeps the package's structure (docs/tui.md, "How
// the TUI is built"): no production function over 80 lines, and
// handleKey, which only walks the overlay stack, the global keys and the
// composer, at most 40.
func TestFunctionLengths(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			seen++
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			limit := 80
			if fd.Name.Name == "handleKey" {
				limit = 40
			}
			if n > limit {
				t.Errorf("%s: %s is %d lines, over %d", f, fd.Name.Name, n, limit)
			}
		}
	}
	if seen < 100 {
		t.Fatalf("only %d functions found; is the test run in the package's directory?", seen)
	}
}
