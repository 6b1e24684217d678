package tool

import (
	"path"
	"strings"
)

// The guarded paths (docs/runtime.md §7.1): workspace paths that make some
// program run commands, or change how one runs, the next time the user
// does something ordinary (git status, cd, opening the editor, starting a
// shell, pushing), and paths that look like they hold secrets. A write to
// one, or a command that names one, is asked about every time: no session
// grant or saved rule covers it. Build files (Makefile, package.json,
// go.mod) are deliberately not guarded: they run only when a build or test
// command runs, and such a command runs the workspace's source code
// anyway, so guarding them would protect nothing that a write to a test
// file does not already reach.

// guardedDir says what the component c (lowercased) configures when it is
// a directory or file whose every descendant is guarded; "" otherwise. A
// switch, not a map: nothing is built when the program starts.
func guardedDir(c string) string {
	switch c {
	case ".git":
		return "git's config and hooks run commands (core.fsmonitor, hooks, aliases)"
	case ".hg":
		return "Mercurial's hgrc and hooks run commands"
	case ".svn":
		return "Subversion's working-copy state"
	case ".scv":
		return "SCV's own workspace configuration"
	case ".direnv", ".envrc":
		return "direnv runs it on entering the directory"
	case ".vscode", ".idea", ".zed", ".devcontainer":
		return "editor settings and tasks, run when the folder opens"
	case ".husky", ".githooks":
		return "git hooks, run on commit, checkout or push"
	case ".claude", ".codex", ".cursor":
		return "another agent's settings, whose hooks run commands"
	case ".config", ".local":
		return "programs' settings and start-up entries"
	case ".gitconfig", ".hgrc", ".pre-commit-config.yaml", ".gitlab-ci.yml", ".circleci", ".exrc", ".nvimrc", ".nvim.lua", "mise.toml", ".mise.toml":
		return "a program runs commands from it"
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
		".kshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc", ".xsession", "config.fish":
		return "a shell start-up file"
	}
	return ""
}

// guardedPair says what two consecutive components a/b configure when
// they form a CI directory.
func guardedPair(a, b string) string {
	switch {
	case b == "workflows" && (a == ".github" || a == ".gitea" || a == ".forgejo"),
		b == "actions" && a == ".github":
		return "CI workflows, run with the repository's secrets"
	}
	return ""
}

// Guarded says why a workspace-relative slash path is guarded: it
// executes or configures something, or looks like it holds a secret; ""
// when it is not. Every component is judged, lowercased, so both
// `.git/config` and `sub/.GIT/hooks/x` are guarded.
func Guarded(p string) string {
	parts := strings.Split(path.Clean(strings.TrimPrefix(p, "/")), "/")
	for i, part := range parts {
		c := strings.ToLower(part)
		if i > 0 {
			if why := guardedPair(strings.ToLower(parts[i-1]), c); why != "" {
				return why
			}
		}
		if why := guardedDir(c); why != "" {
			return why
		}
	}
	if SecretLike(p) {
		return "it looks like it holds secrets"
	}
	return ""
}

// GuardedNames are the fixed names Guarded judges by (lowercased), for a
// check of glob patterns that might match one.
func GuardedNames() []string {
	return []string{".git", ".hg", ".svn", ".scv", ".direnv", ".envrc", ".vscode", ".idea", ".zed", ".devcontainer",
		".husky", ".githooks", ".claude", ".codex", ".cursor", ".config", ".local", ".gitconfig", ".hgrc",
		".pre-commit-config.yaml", ".gitlab-ci.yml", ".circleci", ".exrc", ".nvimrc", ".nvim.lua", "mise.toml", ".mise.toml",
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
		".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc", ".xsession", "config.fish",
		".env", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", ".ssh", ".gnupg", ".aws",
		"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"}
}

// secretName says c (lowercased) is a file or directory name that holds
// credentials: SSH private keys, netrc, package-registry and database
// password files, git's credential store, direnv files, and the directories
// of SSH, GnuPG and the AWS CLI.
func secretName(c string) bool {
	switch c {
	case "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
		".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials",
		".envrc", ".ssh", ".gnupg", ".aws":
		return true
	}
	return false
}

// SecretLike reports whether a workspace-relative path looks like it holds a
// secret: a component that, lowercased, equals ".env", starts with ".env."
// or ends in ".env", contains "credential" or "private_key", ends in ".pem"
// or ".key", or is a secretName. It is a visibility heuristic, not a
// confidentiality boundary.
func SecretLike(p string) bool {
	for _, part := range strings.Split(path.Clean(p), "/") {
		c := strings.ToLower(part)
		if c == ".env" || strings.HasPrefix(c, ".env.") || strings.HasSuffix(c, ".env") ||
			strings.Contains(c, "credential") || strings.Contains(c, "private_key") ||
			strings.HasSuffix(c, ".pem") || strings.HasSuffix(c, ".key") || secretName(c) {
			return true
		}
	}
	return false
}
