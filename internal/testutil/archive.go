package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// Helpers for golden tests whose cases are txtar archives (the protocol
// conversations of internal/server and internal/acp): one subtest per
// archive, named sections, a want section rewritten by -update, and a
// fake model scripted by a section.

// RunArchives runs test as a subtest for each file matching pattern, named
// by its base name without the extension; it fails the test when none
// matches.
func RunArchives(t *testing.T, pattern string, test func(t *testing.T, file string)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s: %v", pattern, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t *testing.T) { test(t, f) })
	}
}

// Section is the content of the archive's file name, and whether it has one.
func Section(a *txtar.Archive, name string) (string, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// GoldenSection compares got with the section name of the archive a, read
// from file; with -update it writes file again with got as that section
// (added at the end when a has none) instead.
func GoldenSection(t testing.TB, file string, a *txtar.Archive, name, got string) {
	t.Helper()
	want, found := Section(a, name)
	if Update() {
		for i := range a.Files {
			if a.Files[i].Name == name {
				a.Files[i].Data = []byte(got)
			}
		}
		if !found {
			a.Files = append(a.Files, txtar.File{Name: name, Data: []byte(got)})
		}
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s of %s differs (run with -update to accept)\n--- got\n%s--- want\n%s", name, file, got, want)
	}
}

// ScriptModel scripts fake with a JSON script in modeltest.LoadScript's
// format (one list of steps per request).
func ScriptModel(t testing.TB, fake *modeltest.Server, script string) {
	t.Helper()
	var responses [][]modeltest.Step
	if err := json.Unmarshal([]byte(script), &responses); err != nil {
		t.Fatalf("parse model script: %v", err)
	}
	for _, steps := range responses {
		fake.Script(steps...)
	}
}

// ArchiveFiles writes the archive's files whose names start with prefix
// below dir, without the prefix (mode 0644, parents created).
func ArchiveFiles(t testing.TB, a *txtar.Archive, prefix, dir string) {
	t.Helper()
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, prefix); ok {
			WriteFile(t, filepath.Join(dir, name), string(f.Data))
		}
	}
}
