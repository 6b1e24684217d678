package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"
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

var absPath = regexp.MustCompile(`(?:^|[\s'"‘“(=:])(/[^\s'"’”):]*)`)

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
		// The path a program names is the last one before the error
		// ("bash: line 1: /x/y: Permission denied").
		path := ""
		if ms := absPath.FindAllStringSubmatch(line[:at], -1); ms != nil {
			path = filepath.Clean(ms[len(ms)-1][1])
		} else if ms := relPath.FindAllStringSubmatch(line[:at], -1); ms != nil && workspace != "" {
			path = filepath.Join(workspace, ms[len(ms)-1][1])
		}
		switch {
		case path != "" && hiddenBy(path, deny) != "":
			add("read of " + path + ", hidden by sandbox.deny_read")
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

var relPath = regexp.MustCompile(`['"‘“]([^/'"’”\s][^'"’”\s]*)['"’”]`)

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
