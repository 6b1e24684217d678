package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/paths"
)

// fixture is an instance home and a workspace in a temp dir.
type fixture struct {
	home paths.Layout
	ws   string
	dir  string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{home: paths.Layout{Home: filepath.Join(dir, "home")}, ws: filepath.Join(dir, "ws"), dir: dir}
	for _, d := range []string{f.home.Home, filepath.Join(f.ws, ".scv")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) user(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, f.home.ConfigFile(), body, 0o600)
}

func (f fixture) project(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, paths.ProjectConfig(f.ws), body, 0o644)
}

func (f fixture) extra(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, filepath.Join(f.dir, "extra.toml"), body, 0o644)
}

func (f fixture) opts() Options {
	return Options{Home: f.home, Workspace: f.ws, Env: map[string]string{"HOME": f.dir}}
}

// writeFile writes a config file with mode (parents 0700), for tests and
// benchmarks alike.
func writeFile(t testing.TB, path, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// problems runs Load and returns its problems (nil on success).
func problems(t *testing.T, opts Options) (*Loaded, []Problem) {
	t.Helper()
	l, err := Load(opts)
	if err == nil {
		return l, nil
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load: %v (not a *config.Error)", err)
	}
	return nil, ce.Problems
}

// named replaces the file name path with name in the sources and
// messages of probs, so that expected problems need not know the temp dir.
func named(probs []Problem, path, name string) []Problem {
	for i := range probs {
		probs[i].Source = strings.ReplaceAll(probs[i].Source, path, name)
		probs[i].Msg = strings.ReplaceAll(probs[i].Msg, path, name)
	}
	return probs
}

func mustLoad(t *testing.T, opts Options) *Loaded {
	t.Helper()
	l, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}
