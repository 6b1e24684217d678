// Package commands loads custom slash commands (docs/tui.md): Markdown
// prompt files in the user's <SCV home>/commands and in a workspace's
// .scv/commands, each becoming /name with its first line as the
// description and $ARGUMENTS replaced by the text after the name. It reads
// the workspace's directory through the workspace's root (a symlink
// leaving it is not followed: a repository cannot point at files
// elsewhere), the user's own directory as it is (symlinks into a dotfiles
// checkout work), bounds every file and the number of files, and says why
// a file was skipped. It imports only the standard library.
package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of the command files.
const (
	// MaxFileBytes bounds one command file.
	MaxFileBytes = 64 << 10
	// MaxFiles bounds the command files read from one directory.
	MaxFiles = 200
	// MaxNameBytes bounds a command's name.
	MaxNameBytes = 64
	// MaxDescription bounds a description, in bytes.
	MaxDescription = 200
	// maxScanned bounds the directory entries looked at.
	maxScanned = 10000
)

// WorkspaceDir is where a workspace keeps its commands, relative to its
// root.
const WorkspaceDir = ".scv/commands"

// Source says where a command comes from.
type Source string

const (
	// User commands are the user's own (<SCV home>/commands).
	User Source = "user"
	// Workspace commands come from the workspace's repository
	// (.scv/commands): anyone who can commit there wrote them.
	Workspace Source = "workspace"
)

// Command is one custom command.
type Command struct {
	Name        string // without the slash
	Description string
	Body        string
	Source      Source
	// File is the path it was read from, for messages.
	File string
}

// Skipped is a command file that was not loaded, with the reason.
type Skipped struct {
	File   string
	Reason string
}

// Dirs are where commands are read from: User is the user's commands
// directory ("" for none) and Workspace the workspace root ("" for none),
// whose WorkspaceDir is read.
type Dirs struct {
	User      string
	Workspace string
}

// ErrNotFound says no directory has a command of that name.
var ErrNotFound = errors.New("no such custom command")

// ValidName reports whether name (without the slash) may name a command:
// a lower-case letter or digit, then lower-case letters, digits, '_' and
// '-', at most MaxNameBytes.
func ValidName(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	if len(name) > MaxNameBytes {
		return fmt.Errorf("the name is %d bytes, over the limit of %d", len(name), MaxNameBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("the name %q is not lower-case letters, digits, '_' and '-' (starting with a letter or digit)", name)
		}
	}
	return nil
}

// List loads every command of d: the user's first, then the workspace's;
// a workspace command with the name of a user command is skipped (the
// user's own command is never replaced by a repository's). Both lists are
// sorted by name.
func List(d Dirs) ([]Command, []Skipped) {
	var out []Command
	var skipped []Skipped
	seen := map[string]bool{}
	for _, src := range d.sources() {
		cmds, sk := loadDir(src)
		skipped = append(skipped, sk...)
		for _, c := range cmds {
			if seen[c.Name] {
				skipped = append(skipped, Skipped{File: c.File, Reason: fmt.Sprintf("your own command /%s has the same name and is used instead", c.Name)})
				continue
			}
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out, skipped
}

// Find loads the one command name, the user's before the workspace's;
// ErrNotFound when neither has it, or the reason its file was refused.
func Find(d Dirs, name string) (Command, error) {
	if err := ValidName(name); err != nil {
		return Command{}, err
	}
	for _, src := range d.sources() {
		root, err := src.open()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return Command{}, err
		}
		c, err := readCommand(root, filepath.Join(src.dir, src.sub), name+".md", src.source)
		root.Close()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return c, err
	}
	return Command{}, ErrNotFound
}

// Expand is the prompt the command sends: its body with every $ARGUMENTS
// replaced by args; a body without $ARGUMENTS gets non-empty args appended
// on a line of their own, so they are never lost.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	if strings.Contains(c.Body, "$ARGUMENTS") {
		return strings.ReplaceAll(c.Body, "$ARGUMENTS", args)
	}
	if args == "" {
		return c.Body
	}
	return strings.TrimRight(c.Body, "\n") + "\n\nArguments: " + args
}

type source struct {
	dir, sub string
	source   Source
}

func (d Dirs) sources() []source {
	var out []source
	if d.User != "" {
		out = append(out, source{dir: d.User, source: User})
	}
	if d.Workspace != "" {
		out = append(out, source{dir: d.Workspace, sub: WorkspaceDir, source: Workspace})
	}
	return out
}

// dir is an open commands directory: an *os.Root or a plainDir.
type dir interface {
	Open(name string) (*os.File, error)
	Close() error
}

// plainDir opens the files of the user's own directory, following
// symlinks.
type plainDir string

func (d plainDir) Open(name string) (*os.File, error) { return os.Open(filepath.Join(string(d), name)) }
func (plainDir) Close() error                         { return nil }

// open opens the source's directory. A workspace's sub directory is
// reached through the workspace's root, so a symlinked .scv or commands
// directory (or a file symlinked in it) cannot lead out of the workspace.
func (s source) open() (dir, error) {
	if s.source == User {
		st, err := os.Stat(s.dir)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", s.dir)
		}
		return plainDir(s.dir), nil
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	sub, err := root.OpenRoot(s.sub)
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// loadDir reads the *.md files of the source's directory, sorted, at most
// MaxFiles.
func loadDir(src source) ([]Command, []Skipped) {
	shown := filepath.Join(src.dir, src.sub)
	root, err := src.open()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Skipped{{File: shown, Reason: "cannot open the directory: " + err.Error()}}
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		return nil, []Skipped{{File: shown, Reason: "cannot open the directory: " + err.Error()}}
	}
	// The names are read in bounded batches; the first MaxFiles .md
	// names in sorted order are used, so which ones does not depend on
	// the file system's order (a directory of more than maxScanned files
	// is not read to its end).
	var names []string
	total := 0
	for total < maxScanned {
		ents, err := f.ReadDir(512)
		for _, e := range ents {
			total++
			if strings.HasSuffix(e.Name(), ".md") && !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		if err != nil || len(ents) == 0 {
			break
		}
	}
	f.Close()
	slices.Sort(names)
	over := len(names) - MaxFiles
	names = names[:min(len(names), MaxFiles)]
	var out []Command
	var skipped []Skipped
	for _, n := range names {
		c, err := readCommand(root, shown, n, src.source)
		if err != nil {
			skipped = append(skipped, Skipped{File: filepath.Join(shown, n), Reason: err.Error()})
			continue
		}
		out = append(out, c)
	}
	if over > 0 {
		skipped = append(skipped, Skipped{File: shown, Reason: fmt.Sprintf("holds %d command files more than the %d used (the first in name order); remove some", over, MaxFiles)})
	}
	return out, skipped
}

// readCommand reads one command file of root; a missing file gives an
// error wrapping fs.ErrNotExist.
func readCommand(root dir, shown, file string, src Source) (Command, error) {
	name := strings.TrimSuffix(file, ".md")
	if err := ValidName(name); err != nil {
		return Command{}, err
	}
	f, err := root.Open(file)
	if err != nil {
		return Command{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Command{}, err
	}
	if !st.Mode().IsRegular() {
		return Command{}, errors.New("not a regular file")
	}
	if st.Size() > MaxFileBytes {
		return Command{}, fmt.Errorf("the file is over the limit of %d KiB; shorten it", MaxFileBytes>>10)
	}
	// Sized from the file, so a listing does not grow buffers; a file
	// that grew since is read on, up to the limit.
	b := make([]byte, st.Size()+1)
	n, err := io.ReadFull(f, b)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		b = b[:n]
	case err != nil:
		return Command{}, err
	default:
		rest, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1-int64(n)))
		if err != nil {
			return Command{}, err
		}
		b = append(b, rest...)
	}
	if len(b) > MaxFileBytes {
		return Command{}, fmt.Errorf("the file is over the limit of %d KiB; shorten it", MaxFileBytes>>10)
	}
	if !utf8.Valid(b) {
		return Command{}, errors.New("the file is not UTF-8 text")
	}
	desc, body := parse(string(b))
	if strings.TrimSpace(body) == "" {
		return Command{}, errors.New("the file has no prompt text")
	}
	return Command{Name: name, Description: desc, Body: body, Source: src, File: filepath.Join(shown, file)}, nil
}

// parse splits a command file into its description and body. An optional
// front matter block (a first line "---" up to the next "---") is dropped
// from the body, and its "description:" line, when there is one, is the
// description; otherwise the first non-empty line of the body is, without
// leading '#' marks.
func parse(text string) (desc, body string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	body = text
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		lines := strings.SplitAfter(rest, "\n")
		for i, l := range lines {
			if strings.TrimSpace(l) != "---" {
				continue
			}
			for _, f := range lines[:i] {
				if v, ok := strings.CutPrefix(strings.TrimSpace(f), "description:"); ok {
					desc = strings.Trim(strings.TrimSpace(v), `"'`)
				}
			}
			body = strings.TrimLeft(strings.Join(lines[i+1:], ""), "\n")
			break
		}
	}
	for rest := body; desc == "" && rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		desc = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
	}
	return clip(desc, MaxDescription), body
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
