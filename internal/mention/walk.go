// Package mention owns `@` mentions (docs/mentions.md): the bounded walk
// of a workspace that respects its .gitignore files, the fuzzy ranking of
// the paths it finds for completion, and the expansion of the `@path`
// tokens of a prompt into the content (or listing) attached for the model.
// Reading a mentioned file is not done here: the caller passes a Source
// whose checks are the `read` tool's own (workspace root, secret-like,
// binary), so a mention can never show the model what `read` would not.
package mention

import (
	"bufio"
	"context"
	"io"
	"os"
	"path"
	"strings"
)

// DefaultMaxEntries bounds how many paths one walk collects; a larger
// workspace is completed over its first DefaultMaxEntries paths in
// breadth-first order (shallow paths first).
const DefaultMaxEntries = 200_000

// maxIgnoreBytes bounds how much of one .gitignore (or .git/info/exclude)
// is read.
const maxIgnoreBytes = 256 << 10

// skipDir says a directory is never walked whatever .gitignore says:
// version-control state, not workspace content.
func skipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".jj":
		return true
	}
	return false
}

// WalkOptions bound a walk.
type WalkOptions struct {
	// Dir is the workspace-relative directory walked ("" is the whole
	// workspace); the .gitignore files of its ancestors apply.
	Dir string
	// MaxEntries bounds the paths collected (DefaultMaxEntries when 0).
	MaxEntries int
	// MaxDepth bounds how deep below Dir the walk goes (1: Dir's own
	// entries); 0 is no bound.
	MaxDepth int
}

// Walker walks a workspace breadth-first, a batch at a time (Next), so a
// caller can show the first paths at once and go on later. Every read goes
// through an os.Root opened on the workspace; symbolic links are listed
// but never followed, so the walk never leaves the workspace. Directories
// end in "/". A Walker is not safe for concurrent use; Close releases it.
type Walker struct {
	root    *os.Root
	opts    WalkOptions
	queue   []dirTask
	cur     *openDir
	found   int
	done    bool
	limited bool
}

// dirTask is a directory to read and the ignore patterns in force there.
type dirTask struct {
	rel      string   // "" for the workspace itself, else "a/b"
	parts    []string // rel's components
	patterns []pattern
	depth    int
	// ownRead says patterns already hold the directory's own .gitignore
	// (the walk's starting directory).
	ownRead bool
}

// openDir is the directory being listed: its entries, read whole, and
// the next one to judge.
type openDir struct {
	dirTask
	ents []dirent
	pos  int
}

// dirent is one directory entry and what the file system says it is.
type dirent struct {
	name             string
	isDir, isRegular bool
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// NewWalker opens the workspace for a walk.
func NewWalker(workspace string, opts WalkOptions) (*Walker, error) {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	w := &Walker{root: root, opts: opts}
	start := dirTask{patterns: readIgnore(root, ".git/info/exclude", nil)}
	start.patterns = append(start.patterns, readIgnore(root, ".gitignore", nil)...)
	if d := strings.Trim(path.Clean("/"+opts.Dir), "/"); d != "" {
		// The ancestors' .gitignore files apply below them.
		parts := strings.Split(d, "/")
		for i := range parts {
			dom := parts[:i+1]
			start.patterns = append(start.patterns, readIgnore(root, strings.Join(dom, "/")+"/.gitignore", dom)...)
		}
		start.rel, start.parts = d, parts
	}
	start.ownRead = true
	w.queue = []dirTask{start}
	return w, nil
}

// Close releases the walker's workspace root.
func (w *Walker) Close() error {
	w.cur, w.queue, w.done = nil, nil, true
	return w.root.Close()
}

// Done says the walk is over: every directory was read or the bound was
// reached (Limited).
func (w *Walker) Done() bool { return w.done }

// Limited says the walk stopped at MaxEntries with paths left unseen.
func (w *Walker) Limited() bool { return w.limited }

// Next returns up to n more paths (n ≤ 0: all that remain within the
// bound). An unreadable directory is skipped; only a cancelled ctx is an
// error.
func (w *Walker) Next(ctx context.Context, n int) ([]string, error) {
	var out []string
	for !w.done && (n <= 0 || len(out) < n) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if w.cur == nil || w.cur.pos >= len(w.cur.ents) {
			w.cur = nil
			if len(w.queue) == 0 {
				w.done = true
				break
			}
			t := w.queue[0]
			w.queue[0] = dirTask{}
			w.queue = w.queue[1:]
			w.cur = w.open(t)
			continue
		}
		e := w.cur.ents[w.cur.pos]
		w.cur.ents[w.cur.pos] = dirent{}
		w.cur.pos++
		if p, ok := w.entry(e); ok {
			out = append(out, p)
			w.found++
			if w.found >= w.opts.MaxEntries {
				w.limited, w.done = true, true
			}
		}
	}
	if w.done {
		w.cur = nil
	}
	return out, nil
}

// open reads the directory of t whole (its .gitignore, if it has one,
// applies to every entry) and closes it; nil when it cannot be read.
func (w *Walker) open(t dirTask) *openDir {
	name := t.rel
	if name == "" {
		name = "."
	}
	f, err := w.root.Open(name)
	if err != nil {
		return nil
	}
	ents, _ := readNames(w.root, t.rel, f) // what was read before an error is kept
	f.Close()
	if t.rel != "" && !t.ownRead {
		for _, e := range ents {
			if e.name == ".gitignore" && e.isRegular {
				if own := readIgnore(w.root, t.rel+"/.gitignore", t.parts); len(own) > 0 {
					t.patterns = append(t.patterns[:len(t.patterns):len(t.patterns)], own...)
				}
				break
			}
		}
	}
	return &openDir{dirTask: t, ents: ents}
}

// entry judges one directory entry of the current directory: its path
// when it is listed, queueing it when it is a directory to descend.
func (w *Walker) entry(e dirent) (string, bool) {
	d := w.cur
	name, isDir := e.name, e.isDir // a symbolic link is never a directory here
	if isDir && skipDir(name) {
		return "", false
	}
	parts := append(d.parts[:len(d.parts):len(d.parts)], name)
	if ignored(d.patterns, parts, isDir) {
		return "", false
	}
	rel := join(d.rel, name)
	if !isDir {
		return rel, true
	}
	if w.opts.MaxDepth <= 0 || d.depth+1 < w.opts.MaxDepth {
		w.queue = append(w.queue, dirTask{rel: rel, parts: parts, patterns: d.patterns, depth: d.depth + 1})
	}
	return rel + "/", true
}

// readIgnore parses the ignore file at rel (bounded; missing is none),
// its patterns applying below domain.
func readIgnore(root *os.Root, rel string, domain []string) []pattern {
	f, err := root.Open(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var ps []pattern
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreBytes))
	for sc.Scan() {
		if p, ok := parsePattern(sc.Text(), domain); ok {
			ps = append(ps, p)
		}
	}
	return ps
}
