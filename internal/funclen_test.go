package internal_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a production function may be, counted from
// its func keyword to its closing brace.
const maxFuncLines = 80

// longFuncs are the production functions still over maxFuncLines, by
// "path: name", each with the length it may not grow past; they are being
// split. A function shortened to the limit needs no edit here (its entry
// only goes stale), but no new one may join the list.
var longFuncs = map[string]int{}

// shortFuncs are functions held to a stricter limit than maxFuncLines:
// the TUI's handleKey only walks the overlay stack, the global keys and
// the composer (docs/tui.md, "How the TUI is built").
var shortFuncs = map[string]int{
	"internal/tui/keys.go: (*Model).handleKey": 40,
}

// TestFunctionLength fails when a function of a non-test Go file of the
// module (commands, internal packages and the bench/ programs, whatever
// their build constraints; generated files excepted) is over maxFuncLines
// lines, so a long function is split into named parts when it is written
// rather than later.
func TestFunctionLength(t *testing.T) {
	lengths, err := funcLengths("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(lengths) < 1000 {
		t.Fatalf("measured only %d functions: the walk missed the module", len(lengths))
	}
	for name, limit := range shortFuncs {
		if n, ok := lengths[name]; !ok {
			t.Errorf("%s is gone: update shortFuncs", name)
		} else if n > limit {
			t.Errorf("%s is %d lines, over its own %d", name, n, limit)
		}
	}
	for name, n := range lengths {
		limit, listed := longFuncs[name]
		switch {
		case n <= maxFuncLines:
			if listed {
				t.Logf("%s is %d lines now: its entry in longFuncs can go", name, n)
			}
		case !listed:
			t.Errorf("%s is %d lines, over %d: split it into named parts", name, n, maxFuncLines)
		case n > limit:
			t.Errorf("%s grew to %d lines (listed at %d, and over %d): split it rather than growing it", name, n, limit, maxFuncLines)
		}
	}
}

// funcLengths parses every non-test, non-generated .go file under root
// (skipping testdata and hidden directories) and returns the length in
// lines of each function with a body, by "path: name" with path relative
// to root and a method named "(Recv).Name".
func funcLengths(root string) (map[string]int, error) {
	out := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1
			key := filepath.ToSlash(rel) + ": " + funcName(fn)
			out[key] = max(out[key], n) // two init funcs of one file share a key
		}
		return nil
	})
	return out, err
}

// funcName is fn's name, a method's with its receiver type: "(*T).Name".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	return fmt.Sprintf("(%s).%s", recvType(fn.Recv.List[0].Type), fn.Name.Name)
}

// recvType is a receiver's type without its type parameters: T or *T.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return fmt.Sprintf("%T", e)
}
