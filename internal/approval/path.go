package approval

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// The path rule of write grants (docs/runtime.md §7.1): a
// write grant holds a workspace path P, either a directory ("src/", with a
// final slash; "./" is the whole workspace) or one file ("src/main.go").
// It covers a write when every path the write touches (the path as given
// and, through symbolic links, where it resolves) is P or lies under the
// directory P. The offer is the directory of the written file; the
// approver may confirm it, narrow it to the file, or widen it to any
// directory that holds the file. No write grant covers a guarded path
// (tool.Guarded): those writes are asked every time.

// WorkspaceRoot is the path of a grant that covers the whole workspace.
const WorkspaceRoot = "./"

// MatchPath reports whether the grant path g covers every path of a write.
func MatchPath(g string, paths []string) bool {
	if g == "" || len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		if !under(g, p) {
			return false
		}
	}
	return true
}

func under(g, p string) bool {
	switch {
	case g == WorkspaceRoot:
		return true
	case strings.HasSuffix(g, "/"):
		return strings.HasPrefix(p, g)
	}
	return p == g
}

// ProposePath is the grant path offered for a write of paths: the
// deepest directory holding them all ("./" for the workspace).
func ProposePath(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	common := strings.Split(path.Dir(paths[0]), "/")
	for _, p := range paths[1:] {
		d := strings.Split(path.Dir(p), "/")
		n := 0
		for n < len(common) && n < len(d) && common[n] == d[n] {
			n++
		}
		common = common[:n]
	}
	if len(common) == 0 || len(common) == 1 && common[0] == "." {
		return WorkspaceRoot
	}
	return strings.Join(common, "/") + "/"
}

// CheckPath checks a grant path the approver typed for a write of paths
// and returns it normalised: "." or "./" is the workspace, a directory
// gets a final slash, the written file itself is a one-file grant.
func CheckPath(typed string, paths []string) (string, error) {
	c, err := cleanGrantPath(typed)
	if err != nil || c == WorkspaceRoot {
		return c, err
	}
	if len(paths) > 0 && c == paths[0] && !strings.HasSuffix(strings.TrimSpace(typed), "/") {
		if MatchPath(c, paths) {
			return c, nil
		}
		return "", fmt.Errorf("the file %q resolves elsewhere (%s); give a directory holding both", c, strings.Join(paths[1:], ", "))
	}
	dir := c + "/"
	if !MatchPath(dir, paths) {
		return "", fmt.Errorf("the directory %q does not hold %s; give the file or one of its directories, such as %q", dir, strings.Join(paths, " and "), ProposePath(paths))
	}
	if why := tool.Guarded(c); why != "" {
		return "", fmt.Errorf("the directory %q is guarded (%s); give a directory that is not", dir, why)
	}
	return dir, nil
}

// cleanGrantPath checks a typed grant path lexically and returns it
// cleaned ("./" for the workspace).
func cleanGrantPath(typed string) (string, error) {
	p := strings.TrimSpace(typed)
	switch {
	case p == "":
		return "", errors.New("the path is empty; give the file or one of its directories, such as `src/`")
	case len(p) > MaxPrefixBytes:
		return "", fmt.Errorf("the path is %d bytes; at most %d are accepted", len(p), MaxPrefixBytes)
	case !Simple(p) || strings.ContainsAny(p, " *?[]\"'"):
		return "", fmt.Errorf("the path %q holds a space, quote, glob or shell character; give a plain workspace path such as `src/`", p)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("the path %q is absolute; give it relative to the workspace, such as `src/`", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("the path %q leaves the workspace; give a directory inside it", p)
	}
	if c == "." {
		return WorkspaceRoot, nil
	}
	return c, nil
}

// CommandGuard says why no grant may cover cmd because it names a guarded
// path (a write grant for `cp` must not let `cp x .git/hooks/pre-commit`
// through); "" when it names none. Words are split at spaces and at the
// characters a shell or an option would separate a path with (= : , and
// the shell's own), quotes dropped; a word with a glob character counts
// when its pattern could match a guarded name. It sees only what the
// command names: a program can still reach such paths without naming them
// (`cp -r . x`), which is why a command grant is a grant to run that
// program with any arguments.
func CommandGuard(cmd string) string {
	toks := strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '=' || r == ':' || r == ',' || r == '"' || r == '\'' || strings.ContainsRune(shellMeta, r)
	})
	for _, t := range toks {
		why := ""
		if strings.ContainsAny(t, "*?[") {
			why = globGuard(t)
		} else {
			why = tool.Guarded(t)
		}
		if why != "" {
			return fmt.Sprintf("names `%s`, a guarded path, asked every time and never covered by a grant: %s", t, why)
		}
	}
	return ""
}

// globSamples are names the secret-like rule matches by shape, for glob
// patterns such as `*.pem`.
func globSamples() []string {
	return []string{"server.pem", "server.key", "credentials.json", "prod.env", ".env.local", "private_key"}
}

// globGuard says why a glob word could match a guarded path.
func globGuard(t string) string {
	for _, part := range strings.Split(t, "/") {
		if !strings.ContainsAny(part, "*?[") {
			if why := tool.Guarded(part); why != "" {
				return why
			}
			continue
		}
		pat := strings.ToLower(part)
		for _, name := range append(tool.GuardedNames(), globSamples()...) {
			// As a shell globs: a pattern matches a dot name only when
			// it starts with a dot itself.
			if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") {
				continue
			}
			if ok, _ := path.Match(pat, name); ok {
				return tool.Guarded(name)
			}
		}
	}
	return ""
}
