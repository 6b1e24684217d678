package mention

import (
	"strings"
	"unicode/utf8"
)

// The completion's ranking is SCV's own small scorer rather than a fuzzy
// library: it keeps only the best few candidates (no allocation per
// candidate, so a keystroke over 200,000 paths stays cheap), compares
// case-insensitively without lowering every path on every keystroke, and
// prefers what a user typing a file name means: a match in the file's own
// name over one spread across its directories.

// Index is the list of workspace paths a completion ranks: what a walk
// found so far. The zero Index is empty and ready to use.
type Index struct {
	paths []string
	// lower[i] is paths[i] lowercased; the same string (no copy) when
	// the path has no upper-case letter.
	lower []string
}

// Add appends paths (as a Walker returns them).
func (ix *Index) Add(paths []string) {
	for _, p := range paths {
		ix.paths = append(ix.paths, p)
		ix.lower = append(ix.lower, lowerASCIIOrSame(p))
	}
}

// Len is how many paths the index holds.
func (ix *Index) Len() int { return len(ix.paths) }

func lowerASCIIOrSame(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(s)
		}
		if 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// Find returns the paths that match query best, at most limit, best first.
// Every character of the query must appear in the path in order (case
// ignored); an empty query lists the shallowest paths first.
func (ix *Index) Find(query string, limit int) []string {
	if limit <= 0 {
		return nil
	}
	q := strings.ToLower(query)
	top := make([]scored, 0, limit+1)
	for i, lp := range ix.lower {
		s, ok := score(q, lp)
		if !ok {
			continue
		}
		c := scored{score: s, i: i, n: len(lp)}
		if len(top) == limit && !c.better(top[len(top)-1], ix.paths) {
			continue
		}
		// Insert in order; the slice stays at most limit long.
		j := len(top)
		top = append(top, c)
		for j > 0 && c.better(top[j-1], ix.paths) {
			top[j] = top[j-1]
			j--
		}
		top[j] = c
		if len(top) > limit {
			top = top[:limit]
		}
	}
	out := make([]string, len(top))
	for k, c := range top {
		out[k] = ix.paths[c.i]
	}
	return out
}

type scored struct {
	score, i, n int
}

// better orders candidates: higher score, then the shorter path, then
// the path's own order.
func (c scored) better(o scored, paths []string) bool {
	if c.score != o.score {
		return c.score > o.score
	}
	if c.n != o.n {
		return c.n < o.n
	}
	return paths[c.i] < paths[o.i]
}

// score rates how well the lowercased query q matches the lowercased path
// p; false when q is not a subsequence of p.
func score(q, p string) (int, bool) {
	if q == "" {
		return -strings.Count(strings.TrimSuffix(p, "/"), "/"), true
	}
	if !subsequence(q, p) {
		return 0, false // most paths: rejected with a few IndexByte scans
	}
	base := p
	if i := strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/'); i >= 0 {
		base = p[i+1:]
	}
	baseName := strings.TrimSuffix(base, "/")
	switch {
	case baseName == q:
		return 10000, true
	case strings.HasPrefix(baseName, q):
		return 8000, true
	case strings.Contains(baseName, q):
		return 6000, true
	case strings.HasPrefix(p, q):
		return 5000, true
	case strings.Contains(p, q):
		return 4000, true
	}
	// A subsequence: reward consecutive characters and those that start
	// a path component or word, penalise the gaps.
	s, last, j := 1000, -2, 0
	for i := 0; i < len(p) && j < len(q); i++ {
		if p[i] != q[j] {
			continue
		}
		switch {
		case i == last+1:
			s += 15
		case i == 0 || isSep(p[i-1]):
			s += 10
		default:
			s -= min(i-last, 20)
		}
		if i >= len(p)-len(base) {
			s += 5 // inside the file's own name
		}
		last = i
		j++
	}
	if j < len(q) {
		return 0, false
	}
	return s, true
}

func isSep(c byte) bool {
	return c == '/' || c == '_' || c == '-' || c == '.' || c == ' '
}

// subsequence says every byte of q appears in p, in order.
func subsequence(q, p string) bool {
	for i := 0; i < len(q); i++ {
		j := strings.IndexByte(p, q[i])
		if j < 0 {
			return false
		}
		p = p[j+1:]
	}
	return true
}
