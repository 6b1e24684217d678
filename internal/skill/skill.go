// Package skill discovers skills at session start: directories holding a
// SKILL.md under the workspace's project skill directory, the user's skill
// directory and, optionally, the `.agents/skills` and `.claude/skills`
// directories of the workspace and its immediate child projects. It builds
// the name → canonical path map that read_skill serves from and renders the
// skill list of the system prompt. Skill text is untrusted: descriptions are
// bounded and stripped of control characters.
package skill

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Options configure discovery (the [skills] keys; docs/skills.md).
type Options struct {
	// Workspace is the session's absolute workspace directory.
	Workspace string
	// ProjectDir is skills.project_dir, relative to the workspace (an
	// absolute path is accepted only if it lies inside the workspace). Empty
	// means DefaultProjectDir.
	ProjectDir string
	// UserDir is skills.user_dir, absolute; empty means none.
	UserDir string
	// ScanProjects is skills.scan_projects.
	ScanProjects bool
	// MaxSkills is skills.max_skills; zero or less means DefaultMaxSkills.
	MaxSkills int
}

// Defaults of the configuration.
const (
	DefaultProjectDir = ".scv/skills"
	DefaultMaxSkills  = 128
	// MaxDescription bounds a description, in characters.
	MaxDescription = 240
	// FileName is the file that makes a directory a skill.
	FileName = "SKILL.md"
)

// Skill is one discovered skill.
type Skill struct {
	// Name is the directory name, or "<project>:<name>" for a project skill.
	Name string
	// Description is sanitized and at most MaxDescription characters.
	Description string
	// Dir is the canonical (symlink-free) skill directory.
	Dir string
	// Root is the canonical skill root Dir was found under; read_skill
	// re-checks containment against it.
	Root string
	// Project is the project label of a project skill, "" otherwise.
	Project string
	// ProjectDir is the workspace-relative directory of that project ("."
	// for the workspace itself), the cwd to delegate with.
	ProjectDir string

	rootInfo fs.FileInfo
}

// RootInfo is the identity of Root at discovery, so a reader can tell that
// the directory it reopens is the one discovered.
func (s Skill) RootInfo() fs.FileInfo { return s.rootInfo }

// Set is the outcome of discovery. The zero value and nil are empty sets.
type Set struct {
	byName  map[string]Skill
	own     []Skill
	project []Skill
}

// Lookup returns the named skill.
func (s *Set) Lookup(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	sk, ok := s.byName[name]
	return sk, ok
}

// Names returns all skill names, sorted.
func (s *Set) Names() []string {
	if s.Len() == 0 {
		return nil
	}
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Len is the number of skills.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.byName)
}

// Own lists the project-dir and user-dir skills in discovery order.
func (s *Set) Own() []Skill {
	if s == nil {
		return nil
	}
	return append([]Skill(nil), s.own...)
}

// Project lists the `<project>:<name>` skills in discovery order.
func (s *Set) Project() []Skill {
	if s == nil {
		return nil
	}
	return append([]Skill(nil), s.project...)
}

// Discover lists the skills of one session. Missing or unreadable skill
// directories are skipped; only invalid options are errors.
func Discover(opts Options) (*Set, error) {
	if opts.Workspace == "" || !filepath.IsAbs(opts.Workspace) {
		return nil, fmt.Errorf("discover skills: workspace %q is not an absolute path", opts.Workspace)
	}
	ws, err := filepath.EvalSymlinks(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("discover skills: workspace: %w", err)
	}
	if opts.UserDir != "" && !filepath.IsAbs(opts.UserDir) {
		return nil, fmt.Errorf("discover skills: skills.user_dir %q is not an absolute path", opts.UserDir)
	}
	projectDir, err := projectRoot(ws, opts.ProjectDir)
	if err != nil {
		return nil, err
	}
	if opts.MaxSkills <= 0 {
		opts.MaxSkills = DefaultMaxSkills
	}
	d := &discovery{set: &Set{byName: map[string]Skill{}}, max: opts.MaxSkills, ws: ws}
	d.scanRoot(projectDir, "", "")
	if opts.UserDir != "" {
		d.scanRoot(opts.UserDir, "", "")
	}
	if opts.ScanProjects {
		d.scanProjects(projectDir)
	}
	return d.set, nil
}

// projectRoot resolves skills.project_dir, which must stay inside the
// workspace.
func projectRoot(ws, dir string) (string, error) {
	if dir == "" {
		dir = DefaultProjectDir
	}
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	p = filepath.Clean(p)
	if !within(ws, p) {
		return "", fmt.Errorf("skills.project_dir %q must stay inside the workspace; use a relative path such as %s", dir, DefaultProjectDir)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil && !within(ws, real) {
		return "", fmt.Errorf("skills.project_dir %q resolves to %s, outside the workspace; use a directory inside it", dir, real)
	}
	return p, nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

type discovery struct {
	set  *Set
	max  int
	ws   string
	seen map[string]bool // canonical roots already scanned
}

func (d *discovery) full() bool { return len(d.set.byName) >= d.max }

// scanRoot adds the skills directly below root, in name order. project is ""
// for own skills.
func (d *discovery) scanRoot(root, project, projectDir string) {
	if d.full() {
		return
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return
	}
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[real] {
		return
	}
	d.seen[real] = true
	// SKILL.md files are opened through this root, so a link (the skill's
	// SKILL.md, or a directory on the way) that leads out of it is refused
	// by the kernel-backed resolution of os.Root, as read_skill does later.
	r, err := os.OpenRoot(real)
	if err != nil {
		return
	}
	defer r.Close()
	info, err := r.Stat(".")
	if err != nil || !info.IsDir() {
		return
	}
	entries, err := fs.ReadDir(r.FS(), ".")
	if err != nil {
		return
	}
	for _, e := range entries {
		if d.full() {
			return
		}
		sk, ok := load(r, real, e.Name())
		if !ok {
			continue
		}
		sk.rootInfo = info
		if project != "" {
			sk.Name, sk.Project, sk.ProjectDir = project+":"+sk.Name, project, projectDir
		}
		if _, dup := d.set.byName[sk.Name]; dup {
			continue // a name's first root wins
		}
		d.set.byName[sk.Name] = sk
		if project == "" {
			d.set.own = append(d.set.own, sk)
		} else {
			d.set.project = append(d.set.project, sk)
		}
	}
}

// load reads one candidate skill directory root/name; r is root opened
// as an os.Root.
func load(r *os.Root, root, name string) (Skill, bool) {
	if !ValidName(name) {
		return Skill{}, false
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil || !within(root, dir) || dir == root {
		return Skill{}, false // a skill linked out of its root is not valid
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return Skill{}, false
	}
	desc, err := readDescription(r, filepath.Join(rel, FileName))
	if err != nil {
		return Skill{}, false // no SKILL.md, not a regular file, or a link out of the root
	}
	return Skill{Name: name, Description: desc, Dir: dir, Root: root}, true
}

// ValidName reports whether a directory name can be a skill name: 1 to 64
// letters, digits, '.', '_' or '-', not starting with '.'.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// scanProjects adds `.agents/skills` and `.claude/skills` of the workspace
// and of its immediate non-hidden child directories. The workspace itself is
// labelled with its base name.
func (d *discovery) scanProjects(ownRoot string) {
	if real, err := filepath.EvalSymlinks(ownRoot); err == nil {
		d.seenRoot(real) // the own project dir is not listed twice
	}
	type project struct{ label, dir, rel string }
	projects := []project{{filepath.Base(d.ws), d.ws, "."}}
	entries, err := os.ReadDir(d.ws)
	if err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || !ValidName(e.Name()) {
				continue
			}
			p := filepath.Join(d.ws, e.Name())
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !within(d.ws, real) {
				continue
			}
			if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
				continue
			}
			projects = append(projects, project{e.Name(), p, e.Name()})
		}
	}
	for _, p := range projects {
		for _, sub := range []string{".agents/skills", ".claude/skills"} {
			root := filepath.Join(p.dir, sub)
			real, err := filepath.EvalSymlinks(root)
			if err != nil || !within(d.ws, real) {
				continue
			}
			d.scanRoot(real, p.label, p.rel)
		}
	}
}

func (d *discovery) seenRoot(real string) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	d.seen[real] = true
}
