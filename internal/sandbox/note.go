package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// refusals are the ways programs print the errors the sandbox causes:
// EACCES and EPERM from Landlock and seccomp, EXDEV from a refused link.
var refusals = []string{"permission denied", "operation not permitted", "errno 13", "errno 1]", "eacces", "eperm",
	"invalid cross-device link", "read-only file system"}

// netFailures are how programs report a network they cannot reach, which
// with network = false is the sandbox.
var netFailures = []string{"couldn't connect to server", "failed to connect", "could not resolve host",
	"temporary failure in name resolution", "name or service not known", "network is unreachable",
	"/dev/tcp", "connect:", "connection refused", "socket:", "sendto", "bind:"}

var absPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s'"‘“(=:])(/[^\s'"’”):]*)`) })

// Explain reads the output of a failed sandboxed command and, when it shows
// a refusal the sandbox explains, says what was blocked, e.g. "blocked by
// the sandbox: write outside the workspace (/etc/hosts)". It returns "" when
// nothing in the output points at the sandbox. It judges by the messages
// programs print, so it names the likely rule, not a kernel record.
func Explain(c Config, workspace, output string) string {
	if !c.On() {
		return ""
	}
	deny := cleanAbs(c.DenyRead)
	var found []string
	add := func(s string) {
		for _, f := range found {
			if f == s {
				return
			}
		}
		if len(found) < 3 {
			found = append(found, s)
		}
	}
	for _, line := range strings.Split(output, "\n") {
		low := strings.ToLower(line)
		at := indexAny(low, refusals)
		refused := at >= 0
		if !c.Network && containsAny(low, netFailures) && (refused || !strings.Contains(low, "no such file")) {
			add("network access (sandbox.network = false)")
			continue
		}
		if !refused {
			continue
		}
		if strings.Contains(low, "kill") {
			add("signal to a process outside the sandbox")
			continue
		}
		path := refusedPath(line, at, workspace)
		switch {
		case path != "" && hiddenBy(path, deny) != "":
			add("read of " + path + ", hidden by sandbox.deny_read")
		case path != "" && holdsHidden(path, deny):
			add("listing " + path + ", which holds paths hidden by sandbox.deny_read (name the file or directory you need instead)")
		case path != "" && c.Mode == ModeReadOnly:
			add("write in read-only mode (" + path + ")")
		case path != "" && !writable(path, c, workspace):
			add("write outside the workspace (" + path + ")")
		case path == "":
			add("an operation the sandbox does not allow")
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "blocked by the sandbox: " + strings.Join(found, "; ")
}

var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`['"‘“]([^'"’”]+)['"’”]`) })

// refusedPath is the path a refusal names: the field right before the
// error ("bash: line 1: /x/y: Permission denied", "cp: cannot create
// regular file '/x': Permission denied"), or a path after it (Python's
// "Permission denied: '/x'"); relative paths are taken from the workspace.
func refusedPath(line string, at int, workspace string) string {
	seg := strings.TrimRight(line[:at], ": ")
	if i := strings.LastIndex(seg, ": "); i >= 0 {
		seg = seg[i+2:]
	}
	cand := ""
	if m := quoted().FindAllStringSubmatch(seg, -1); m != nil {
		cand = m[len(m)-1][1]
	} else if f := strings.Fields(seg); len(f) > 0 {
		cand = f[len(f)-1]
	}
	if !strings.HasPrefix(cand, "/") && !strings.Contains(cand, "/") && !strings.Contains(cand, ".") {
		cand = "" // a word, not a path
	}
	if cand == "" {
		if m := absPath().FindStringSubmatch(line[at:]); m != nil {
			cand = m[1]
		}
	}
	switch {
	case cand == "":
		return ""
	case filepath.IsAbs(cand):
		return filepath.Clean(cand)
	case workspace != "":
		return filepath.Join(workspace, cand)
	}
	return ""
}

// indexAny is the first index of any of subs in s, or -1.
func indexAny(s string, subs []string) int {
	first := -1
	for _, x := range subs {
		if i := strings.Index(s, x); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// hiddenBy returns the deny_read entry p lies at or below, or "".
func hiddenBy(p string, deny []string) string {
	for _, d := range deny {
		if under(p, d) {
			return d
		}
	}
	return ""
}

// holdsHidden says a hidden path lies below directory p (which is then
// not listable).
func holdsHidden(p string, deny []string) bool {
	for _, d := range deny {
		if under(d, p) {
			return true
		}
	}
	return false
}

func writable(p string, c Config, workspace string) bool {
	roots := append([]string{workspace}, c.WritableRoots...)
	for _, d := range devices {
		if p == d {
			return true
		}
	}
	for _, r := range cleanAbs(roots) {
		if under(p, r) {
			return true
		}
	}
	return false
}
