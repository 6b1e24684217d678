package fs

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// maxGitConfigBytes bounds how much of .git/config is read to find
// core.hooksPath.
const maxGitConfigBytes = 256 << 10

// writePaths are the paths a write of rel touches: rel itself and, when
// symbolic links on the way lead elsewhere inside the workspace, where it
// resolves. A session grant must cover them all, and each is judged by the
// guarded-path rule.
func writePaths(workspace, rel string) []string {
	out := []string{rel}
	if t := resolvedPath(workspace, rel); t != "" && t != rel {
		out = append(out, t)
	}
	return out
}

// resolvedPath is rel with the symbolic links of its longest existing
// ancestor resolved, relative to the resolved workspace; "" when the
// workspace cannot be resolved or the path leads outside (which the write
// refuses anyway).
func resolvedPath(workspace, rel string) string {
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return ""
	}
	p, rest := filepath.Join(ws, filepath.FromSlash(rel)), ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			t, err := filepath.Rel(ws, filepath.Join(real, rest))
			if err != nil || !filepath.IsLocal(t) {
				return ""
			}
			return filepath.ToSlash(t)
		}
		parent := filepath.Dir(p)
		if parent == p || len(parent) < len(ws) {
			return ""
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// guardWhy says in one line why a write of paths is guarded (asked every
// time, never covered by a grant), or "" when it is not: a path the
// guarded-path rule names, or one under the hooks directory git's
// core.hooksPath points at.
func guardWhy(workspace string, paths []string) string {
	for _, p := range paths {
		if why := tool.Guarded(p); why != "" {
			return fmt.Sprintf("`%s` is a guarded path, asked every time and never covered by a grant: %s", p, why)
		}
	}
	if hp := hooksPath(workspace); hp != "" {
		for _, p := range paths {
			if p == hp || strings.HasPrefix(p, hp+"/") {
				return fmt.Sprintf("`%s` is a guarded path, asked every time and never covered by a grant: git's core.hooksPath `%s` holds hooks, run on commit, checkout or push", p, hp)
			}
		}
	}
	return ""
}

// hooksPath is the workspace-relative directory that core.hooksPath in
// the workspace's .git/config names, or "" (none, absolute, outside, or
// unreadable). The file is read through the workspace root and bounded.
func hooksPath(workspace string) string {
	root, fail := openRoot(workspace)
	if fail != nil {
		return ""
	}
	defer root.Close()
	f, err := root.Open(".git/config")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxGitConfigBytes))
	found := ""
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if v == "" || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
			continue
		}
		if c := path.Clean(v); c != "." && filepath.IsLocal(c) {
			found = c // the last setting wins, as in git
		}
	}
	return found
}
