package approval

import (
	"path"
	"strings"
)

// The runner rule of command grants (docs/runtime.md §7.1):
// a prefix whose first word is a shell, an interpreter or a command runner
// would cover every script or command handed to it (`bash` covers
// `bash -c 'anything'`), so such a prefix is never proposed and is refused
// when typed, unless it holds a fixed script: a word after the runner,
// before any option, that names a file (it holds a `/` or ends in an
// extension such as `.py`), or, for Python, `-m module`. So
// `python3 scripts/check.py` and `bash ./ci.sh` may be granted, `python3`,
// `python3 -c`, `node -e`, `sh -c` and `env` may not. Commands that raise
// privileges (sudo, doas, su) are never granted with any prefix. The first
// word is judged by its base name (`/usr/bin/env` is `env`).

// runnerKind classifies a command's first word (its base name): "shell",
// "interpreter", "runner" (runs the command it is given), "elevate", or ""
// for any other program.
func runnerKind(name string) string {
	switch name {
	case "bash", "sh", "zsh", "dash", "fish", "ksh", "mksh", "ash", "csh", "tcsh", "busybox", "pwsh", "nu", "elvish", "xonsh":
		return "shell"
	case "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit", "awk", "gawk", "mawk", "nawk",
		"tclsh", "wish", "rscript", "osascript", "npx", "bunx", "pnpx", "uvx":
		return "interpreter"
	case "env", "xargs", "nohup", "timeout", "nice", "ionice", "exec", "eval", "command", "time", "watch",
		"setsid", "stdbuf", "chroot", "flock", "nsenter", "unshare", "builtin", "coproc", "parallel", "script", "strace", "ltrace", "gdb":
		return "runner"
	case "sudo", "doas", "su", "pkexec", "run0":
		return "elevate"
	}
	if strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy") {
		return "interpreter"
	}
	return ""
}

// runnerWhy says why a prefix of words p may not be granted because its
// first word runs other code ("`bash` is a shell, which runs any script
// it is given"); "" when it may.
func runnerWhy(p []string) string {
	if len(p) == 0 {
		return ""
	}
	name := path.Base(p[0])
	kind := runnerKind(strings.ToLower(name))
	switch {
	case kind == "":
		return ""
	case kind == "elevate":
		return "`" + name + "` runs commands with raised privileges"
	case scriptAt(p) > 0:
		return ""
	case kind == "shell":
		return "`" + name + "` is a shell, which runs any script it is given"
	case kind == "interpreter":
		return "`" + name + "` is an interpreter, which runs any code it is given"
	}
	return "`" + name + "` runs whatever command follows it"
}

// runnerRefusal is CheckPrefix's error for a runner prefix: why, and
// what may be granted instead.
func runnerRefusal(p []string, why string) string {
	name := path.Base(p[0])
	switch runnerKind(strings.ToLower(name)) {
	case "elevate":
		return why + ": no prefix may start with it"
	case "shell":
		return why + ": a prefix must name a fixed script after it, such as `" + name + " ./ci.sh`"
	case "interpreter":
		return why + ": a prefix must name a fixed script after it, such as `" + name + " scripts/check" + ext(name) + "`"
	}
	return why + ": a prefix must name a fixed script after it, such as `" + name + " ./run.sh`"
}

// ext is an example script extension for an interpreter's name.
func ext(name string) string {
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"):
		return ".py"
	case name == "ruby":
		return ".rb"
	case name == "perl":
		return ".pl"
	case name == "php":
		return ".php"
	case name == "lua", name == "luajit":
		return ".lua"
	}
	return ".js"
}

// scriptAt is the index of the fixed script in the words of a runner's
// command, or -1: the first word after the runner, before any option,
// that names a file; for Python the module after `-m`.
func scriptAt(c []string) int {
	py := strings.HasPrefix(path.Base(c[0]), "python") || strings.HasPrefix(path.Base(c[0]), "pypy")
	for i := 1; i < len(c); i++ {
		w := c[i]
		if py && w == "-m" && i+1 < len(c) && moduleName(c[i+1]) {
			return i + 1
		}
		if strings.HasPrefix(w, "-") {
			return -1
		}
		if scriptWord(w) {
			return i
		}
	}
	return -1
}

// scriptWord says w names a script file: no `=` (an assignment for env),
// and a `/` or an extension of letters and digits.
func scriptWord(w string) bool {
	if strings.ContainsRune(w, '=') || !plainWord(w) {
		return false
	}
	if strings.ContainsRune(w, '/') {
		return strings.Trim(w, "./") != ""
	}
	e := path.Ext(w)
	if len(e) < 2 || len(e) == len(w) {
		return false
	}
	for _, r := range e[1:] {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// moduleName: a Python module path (letters, digits, _ and .).
func moduleName(w string) bool {
	for _, r := range w {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return w != "" && w[0] != '.'
}

// findAction is the first action of a `find` command that runs another
// program or writes or deletes files (-exec, -execdir, -ok, -okdir,
// -delete, -fprint…, -fls), or "".
func findAction(c []string) string {
	if len(c) == 0 || path.Base(c[0]) != "find" {
		return ""
	}
	for _, w := range c[1:] {
		switch w {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return w
		}
	}
	return ""
}
