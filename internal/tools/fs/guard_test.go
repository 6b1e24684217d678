package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// TestWriteGuardedPaths: a write to a path that executes or configures,
// directly or through a symbolic link, is marked NoGrant with a reason,
// and its paths (as given and as resolved) are what a grant must cover.
func TestWriteGuardedPaths(t *testing.T) {
	ws := testutil.TempDir(t)
	testutil.Files(t, ws, map[string]string{
		".git/config":    "[core]\n\thooksPath = scripts/hooks\n",
		"src/main.go":    "package main\n",
		"lnk":            "->.git",
		"srclink":        "->src",
		"scripts/hooks/": "",
	})
	wr := NewWrite(Options{})
	plan := func(p, mode string) tool.Plan {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": p, "content": "x", "mode": mode})
		pl, err := wr.Plan(tool.Env{Workspace: ws}, args)
		if err != nil {
			t.Fatalf("plan %s: %v", p, err)
		}
		return pl
	}
	for _, tc := range []struct {
		path, mode string
		why        string // "" not guarded
		paths      []string
	}{
		{"a.txt", "create", "", []string{"a.txt"}},
		{"src/new.go", "create", "", []string{"src/new.go"}},
		{"srclink/new.go", "create", "", []string{"srclink/new.go", "src/new.go"}},
		{".git/config", "replace", "`.git/config` is a guarded path, asked every time and never covered by a grant: git's config", []string{".git/config"}},
		{".git/hooks/pre-commit", "create", "`.git/hooks/pre-commit` is a guarded path", nil},
		{"lnk/hooks/post-checkout", "create", "`.git/hooks/post-checkout` is a guarded path", []string{"lnk/hooks/post-checkout", ".git/hooks/post-checkout"}},
		{"sub/.GIT/x", "create", "guarded path", nil},
		{".scv/config.toml", "create", "SCV's own workspace configuration", nil},
		{".envrc", "create", "direnv", nil},
		{".env", "create", "holds secrets", nil},
		{".vscode/tasks.json", "create", "editor settings", nil},
		{".husky/pre-push", "create", "git hooks", nil},
		{".github/workflows/ci.yml", "create", "CI workflows", nil},
		{".bashrc", "create", "shell start-up file", nil},
		{"scripts/hooks/pre-commit", "create", "core.hooksPath `scripts/hooks` holds hooks", nil},
		{"Makefile", "create", "", nil},
		{".github/CODEOWNERS", "create", "", nil},
	} {
		pl := plan(tc.path, tc.mode)
		if tc.why == "" {
			if pl.NoGrant || pl.NoGrantWhy != "" {
				t.Errorf("%s: guarded (%q), want not", tc.path, pl.NoGrantWhy)
			}
		} else if !pl.NoGrant || !strings.Contains(pl.NoGrantWhy, tc.why) || !strings.Contains(pl.NoGrantWhy, "asked every time and never covered by a grant") {
			t.Errorf("%s: NoGrant %v, why %q; want it to hold %q", tc.path, pl.NoGrant, pl.NoGrantWhy, tc.why)
		}
		if tc.paths != nil {
			if d := cmp.Diff(tc.paths, pl.Paths); d != "" {
				t.Errorf("%s: paths (-want +got):\n%s", tc.path, d)
			}
		}
	}
}

// TestWriteGuardSwappedLink: a symbolic link swapped in after an
// unguarded write was planned (and perhaps allowed by a grant) cannot
// lead the write into a guarded path.
func TestWriteGuardSwappedLink(t *testing.T) {
	ws := testutil.TempDir(t)
	testutil.Files(t, ws, map[string]string{".git/hooks/": "", "d/": ""})
	wr := NewWrite(Options{})
	pl, err := wr.Plan(tool.Env{Workspace: ws}, json.RawMessage(`{"path":"d/pre-commit","content":"#!/bin/sh\nid\n","mode":"create"}`))
	if err != nil || pl.NoGrant {
		t.Fatalf("plan: %v, NoGrant %v", err, pl.NoGrant)
	}
	if err := os.Remove(filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git/hooks", filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	res := pl.Run(t.Context())
	if res.Success || res.Error != tool.Denied || !strings.Contains(res.Output, "nothing was written") {
		t.Fatalf("result %+v, want a refusal", res)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit")); !os.IsNotExist(err) {
		t.Fatalf("the hook was written: %v", err)
	}
}
