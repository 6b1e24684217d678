package mention

import (
	"path"
	"slices"
	"strings"
)

// A .gitignore matcher of our own: git's rules for one pattern line
// (gitignore(5)), judged against the components of a path. The maintained
// library (go-git's plumbing/format/gitignore) would bring four packages
// with start-up work into every command; what the walk needs is this.
//   - a blank line or one starting with "#" is no pattern; "\#" and "\!"
//     start a pattern with a literal "#" or "!";
//   - "!" negates: a later negated pattern re-includes what an earlier one
//     excluded (the last matching line decides);
//   - a trailing "/" matches directories only;
//   - a pattern with a "/" before its end is relative to the directory of
//     its .gitignore; one without matches a name at any depth below it;
//   - "*", "?" and "[…]" match within one component ("[!…]" negates a
//     class), "**" as a whole component matches any number of them.

// pattern is one parsed line.
type pattern struct {
	segs     []string
	negate   bool
	dirOnly  bool
	anchored bool
	domain   []string // components of the directory the .gitignore is in
}

// parsePattern parses one line of a .gitignore in domain; false when the
// line holds no pattern.
func parsePattern(line string, domain []string) (pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	p := pattern{domain: domain}
	switch {
	case line[0] == '!':
		p.negate, line = true, line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	p.anchored = strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	for _, s := range strings.Split(line, "/") {
		if s == "" {
			continue
		}
		p.segs = append(p.segs, strings.ReplaceAll(s, "[!", "[^"))
	}
	return p, len(p.segs) > 0
}

// match says the pattern matches the path whose components are parts.
func (p *pattern) match(parts []string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if len(parts) <= len(p.domain) || !slices.Equal(parts[:len(p.domain)], p.domain) {
		return false
	}
	rel := parts[len(p.domain):]
	if !p.anchored {
		// A bare name matches the last component at any depth.
		if len(p.segs) == 1 {
			ok, err := path.Match(p.segs[0], rel[len(rel)-1])
			return ok && err == nil
		}
	}
	return matchSegs(p.segs, rel)
}

// matchSegs matches glob components against path components, "**" taking
// any number of them.
func matchSegs(segs, parts []string) bool {
	for len(segs) > 0 {
		if segs[0] == "**" {
			segs = segs[1:]
			if len(segs) == 0 {
				return len(parts) > 0 // "dir/**": everything inside
			}
			for i := 0; i <= len(parts); i++ {
				if matchSegs(segs, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := path.Match(segs[0], parts[0]); !ok || err != nil {
			return false
		}
		segs, parts = segs[1:], parts[1:]
	}
	return len(parts) == 0
}

// ignored applies patterns as git does: the last one that matches
// decides, so a later "!keep" re-includes what an earlier line excluded.
func ignored(patterns []pattern, parts []string, isDir bool) bool {
	for i := len(patterns) - 1; i >= 0; i-- {
		if patterns[i].match(parts, isDir) {
			return !patterns[i].negate
		}
	}
	return false
}
