package testutil

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files creates files below base: path → content; a content starting with
// "->" makes a symbolic link to the rest, a path ending in "/" an empty
// directory. Parents are created. It fails the test on any error.
func Files(t testing.TB, base string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(base, name)
		switch {
		case strings.HasSuffix(name, "/"):
			mkdir(t, p)
		case strings.HasPrefix(content, "->"):
			mkdir(t, filepath.Dir(p))
			if err := os.Symlink(strings.TrimPrefix(content, "->"), p); err != nil {
				t.Fatal(err)
			}
		default:
			WriteFile(t, p, content)
		}
	}
}

// WriteFile writes content to path (mode 0644), creating its parents.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Mode is the permission bits of path.
func Mode(t testing.TB, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TempDir is t.TempDir() with its symbolic links resolved (on macOS the
// temporary directory is behind one), for tests that compare canonical
// paths.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// JSON is v marshalled, for building tool arguments; it panics on a value
// that cannot be marshalled (a mistake in the test itself).
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// BigHTMLPage repeats the bodies of the HTML golden pages in dir (docs,
// article, table, links: internal/tools/web/testdata) inside one document
// until it holds size bytes: the page the web_fetch benchmarks convert.
func BigHTMLPage(dir string, size int) ([]byte, error) {
	var bodies [][]byte
	for _, n := range []string{"docs", "article", "table", "links"} {
		raw, err := os.ReadFile(filepath.Join(dir, n+".html"))
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(raw, []byte("<body")); i >= 0 {
			raw = raw[i:]
		}
		bodies = append(bodies, raw)
	}
	var buf bytes.Buffer
	buf.WriteString("<!DOCTYPE html><html><head><title>big</title></head><body>")
	for i := 0; buf.Len() < size; i++ {
		buf.WriteString("<section>")
		buf.Write(bodies[i%len(bodies)])
		buf.WriteString("</section>")
	}
	buf.WriteString("</body></html>")
	return buf.Bytes(), nil
}

// Script writes an executable bash script named name in dir running body,
// and returns its path.
func Script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Executable is the path of the running test binary (which some tests run
// again as a helper).
func Executable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
