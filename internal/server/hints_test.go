package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHintsNameWhatUsersType: where an error message says what to do
// next, it names a command a person types (`scv sessions list`, /model,
// Ctrl+C), never a protocol message (session.list), which only a client
// program sends.
func TestHintsNameWhatUsersType(t *testing.T) {
	msg := `(session|turn|approval|daemon|models)\.[a-z_]+`
	hint := regexp.MustCompile(`\b(with|before|use|see|try|run) ` + msg + `|\b` + msg + ` (shows|lists)\b`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && hint.MatchString(s) {
				t.Errorf("%s: %q tells the user to send a protocol message; name the command they type", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
