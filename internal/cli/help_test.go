package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestHelpGolden pins the --help text of every command (gopls-style golden
// help), so a changed flag or description shows up in review.
func TestHelpGolden(t *testing.T) {
	var paths [][]string
	root := newRootCmd(&globals{})
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		paths = append(paths, []string{c.Name()})
		for _, sub := range c.Commands() {
			paths = append(paths, []string{c.Name(), sub.Name()})
		}
	}
	paths = append([][]string{{}}, paths...)
	for _, p := range paths {
		name := strings.Join(append([]string{"scv"}, p...), "_")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(t.Context(), append(append([]string{}, p...), "--help"), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			file := filepath.Join("testdata", "help", name+".txt")
			if testutil.Update() {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli -run TestHelpGolden -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("help of %s changed (rerun with -update if intended):\n--- got\n%s\n--- want\n%s", name, out.String(), want)
			}
		})
	}
}
