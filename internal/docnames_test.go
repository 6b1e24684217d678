package internal_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docName matches a code span naming a Go identifier of a package:
// `pkg.Name`, `pkg.Type.Member` or `internal/path/pkg.Name`.
var docName = regexp.MustCompile("`((?:internal/)?(?:[a-z][a-z0-9]*/)*[a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*))?`")

// declared holds the names one SCV package declares: top-level names, and
// "Type.Member" for methods and struct fields.
type declared map[string]bool

// TestDocsNameRealIdentifiers fails when a document under docs/ (or the
// README) names an identifier of an SCV package that does not exist, so a
// rename cannot leave the docs behind. Spans whose package is not an SCV
// package (os.Root, json.Unmarshal, a variable such as env.Workspace) are not
// checked.
func TestDocsNameRealIdentifiers(t *testing.T) {
	byName, byPath := scanPackages(t, ".")
	checked := 0
	eachDocMatch(t, docName, func(where string, m []string) {
		pkgRef, name, member := m[1], m[2], m[3]
		var cands []declared
		if strings.HasPrefix(pkgRef, "internal/") {
			if d, ok := byPath[strings.TrimPrefix(pkgRef, "internal/")]; ok {
				cands = []declared{d}
			}
		} else if !strings.Contains(pkgRef, "/") {
			cands = byName[pkgRef]
		}
		if len(cands) == 0 {
			return
		}
		checked++
		want := name
		if member != "" {
			want = name + "." + member
		}
		found := false
		for _, d := range cands {
			found = found || d[want]
		}
		if !found {
			t.Errorf("%s: names %s.%s, which package %s does not declare", where, pkgRef, want, pkgRef)
		}
	})
	if checked < 20 {
		t.Fatalf("checked only %d identifiers named in docs/: the pattern no longer finds them", checked)
	}
}

// eachDocMatch calls f with each match of re in the documents under docs/
// and the README, and where it stands ("docs/fs.md:12").
func eachDocMatch(t *testing.T, re *regexp.Regexp, f func(where string, m []string)) {
	t.Helper()
	docs, _ := filepath.Glob("../docs/*.md")
	more, _ := filepath.Glob("../docs/*/*.md")
	for _, doc := range append(append(docs, more...), "../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				f(fmt.Sprintf("%s:%d", filepath.ToSlash(doc[3:]), i+1), m)
			}
		}
	}
}

// scanPackages parses every non-test Go file under root and returns the
// declared names by package name and by path relative to root.
func scanPackages(t *testing.T, root string) (map[string][]declared, map[string]declared) {
	t.Helper()
	byPath := map[string]declared{}
	names := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		decl := byPath[dir]
		if decl == nil {
			decl = declared{}
			byPath[dir] = decl
			names[dir] = f.Name.Name
		}
		collect(f, decl)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]declared{}
	dirs := make([]string, 0, len(byPath))
	for dir := range byPath {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		byName[names[dir]] = append(byName[names[dir]], byPath[dir])
	}
	return byName, byPath
}

func collect(f *ast.File, decl declared) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				decl[d.Name.Name] = true
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); recv != "" {
				decl[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decl[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								decl[s.Name.Name+"."+n.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decl[n.Name] = true
					}
				}
			}
		}
	}
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// docTest matches a code span naming a test or benchmark function.
var docTest = regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)`")

// TestDocsNameRealTests fails when a document names a test, benchmark or
// fuzz function that no _test.go file of the module declares, so "where
// each promise is tested" stays true after a rename.
func TestDocsNameRealTests(t *testing.T) {
	funcs := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				funcs[fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	eachDocMatch(t, docTest, func(where string, m []string) {
		checked++
		if !funcs[m[1]] {
			t.Errorf("%s: names %s, which no test file declares", where, m[1])
		}
	})
	if checked < 20 {
		t.Fatalf("checked only %d test names in docs/: the pattern no longer finds them", checked)
	}
}
