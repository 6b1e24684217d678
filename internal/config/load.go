package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/scv-agent/scv/internal/paths"
)

// maxFileBytes bounds a config file; real ones are a few KiB.
const maxFileBytes = 1 << 20

// Overrides are the global flags that change settings (docs/runtime.md,
// "Processes and commands");
// empty means not given.
type Overrides struct {
	Model, Provider, BaseURL, ApprovalPolicy string
}

// Options say where the layers come from.
type Options struct {
	Home paths.Layout
	// Workspace holds the project config; empty means no project layer.
	Workspace string
	// ExtraFile is the --config file; empty falls back to Env["SCV_CONFIG"].
	ExtraFile string
	Env       map[string]string
	Flags     Overrides
}

// Layer names, lowest first.
const (
	LayerDefault = "default"
	LayerUser    = "user"
	LayerProject = "project"
	LayerConfig  = "config"
	LayerEnv     = "env"
	LayerFlag    = "flag"
)

// origin is where one effective setting came from.
type origin struct {
	layer string
	file  string // user, project, config layers
	line  int
	name  string // env variable or flag
}

func (o origin) String() string {
	switch o.layer {
	case LayerUser, LayerProject, LayerConfig:
		return o.layer + " " + o.file
	case LayerEnv, LayerFlag:
		return o.layer + " " + o.name
	}
	return LayerDefault
}

// Problem is one configuration error: its source (a file, "env NAME",
// "flag --name" or "default"), line when known, key and message.
type Problem struct {
	Source string
	Line   int
	Key    string
	Msg    string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Source)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Key != "" {
		b.WriteString(": " + p.Key)
	}
	return b.String() + ": " + p.Msg
}

// Error lists every problem found in the layer that failed (or in the
// cross-field rules).
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "invalid configuration: " + strings.Join(lines, "\n  ")
}

// File is one config file that was read.
type File struct {
	Layer, Path string
}

// Loaded is the effective configuration with the provenance of every key.
type Loaded struct {
	Config Config
	// Files are the files read, lowest layer first.
	Files []File
	// Deprecated lists settings given with a deprecated name that was
	// accepted and replaced by the current one; callers show them as
	// warnings.
	Deprecated []Problem
	origins    map[string]origin
}

// Origin explains where key (as `scv config show` spells it) came from:
// "default", "user <path>", "project <path>", "config <path>",
// "env SCV_MODEL", "flag --model".
func (l *Loaded) Origin(key string) string {
	for k := key; k != ""; {
		if o, ok := l.origins[k]; ok {
			return o.String()
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return LayerDefault
}

func (l *Loaded) where(key string) (string, int) {
	o, ok := l.origins[key]
	if !ok {
		return LayerDefault, 0
	}
	if o.file != "" {
		return o.file, o.line
	}
	return o.String(), 0
}

// Load builds the effective configuration from every layer.
func Load(opts Options) (*Loaded, error) {
	if opts.Home.Home == "" {
		return nil, errors.New("load config: no instance home")
	}
	l := &Loaded{Config: Defaults(opts.Home.SkillsDir()), origins: map[string]origin{}}
	userPath := opts.Home.ConfigFile()
	if err := l.loadFile(userPath, LayerUser, false); err != nil {
		return nil, err
	}
	if opts.Workspace != "" {
		pc := paths.ProjectConfig(opts.Workspace)
		if !sameFile(pc, userPath) {
			if err := l.loadFile(pc, LayerProject, false); err != nil {
				return nil, err
			}
		}
	}
	extra := opts.ExtraFile
	if extra == "" {
		extra = opts.Env["SCV_CONFIG"]
	}
	if extra != "" {
		if err := l.loadFile(extra, LayerConfig, true); err != nil {
			return nil, err
		}
	}
	if err := l.applyOverrides(opts); err != nil {
		return nil, err
	}
	if ud := l.Config.Skills.UserDir; strings.HasPrefix(ud, "~/") {
		home := paths.UserHome(opts.Env)
		if home == "" {
			src, line := l.where("skills.user_dir")
			return nil, &Error{Problems: []Problem{{Source: src, Line: line, Key: "skills.user_dir",
				Msg: fmt.Sprintf("%q starts with ~/ but HOME is not set; use an absolute path", ud)}}}
		}
		l.Config.Skills.UserDir = filepath.Join(home, ud[2:])
	}
	if probs := l.checkSandboxPaths(opts); len(probs) > 0 {
		return nil, &Error{Problems: probs}
	}
	if probs := l.crossField(opts.Env); len(probs) > 0 {
		return nil, &Error{Problems: probs}
	}
	return l, nil
}

// checkSandboxPaths refuses a "~/" sandbox path when HOME is not set and
// the sandbox is on (with it off nothing uses the paths).
func (l *Loaded) checkSandboxPaths(opts Options) []Problem {
	if paths.UserHome(opts.Env) != "" || l.Config.Sandbox.Mode == SandboxOff {
		return nil
	}
	var probs []Problem
	for key, list := range map[string][]string{"sandbox.writable_roots": l.Config.Sandbox.WritableRoots, "sandbox.deny_read": l.Config.Sandbox.DenyRead} {
		for _, e := range list {
			if strings.HasPrefix(e, "~/") {
				src, line := l.where(key)
				probs = append(probs, Problem{Source: src, Line: line, Key: key,
					Msg: fmt.Sprintf("%q starts with ~/ but HOME is not set; use an absolute path", e)})
				break
			}
		}
	}
	slices.SortFunc(probs, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return probs
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// readFile reads a config file through one descriptor, so the mode checked
// is the mode of the bytes read.
func readFile(path string) ([]byte, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if st.IsDir() {
		return nil, 0, errors.New("is a directory")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > maxFileBytes {
		return nil, 0, fmt.Errorf("larger than %d bytes", maxFileBytes)
	}
	return data, st.Mode().Perm(), nil
}

// entry is one key a file sets (leaf) or one table it opens (container).
type entry struct {
	r    resolved
	line int
	// array marks the header of one table of an array ([[hooks.run]]).
	array bool
}

// loadFile applies one file layer. A missing optional file is no layer.
func (l *Loaded) loadFile(path, layer string, required bool) error {
	data, mode, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return &Error{Problems: []Problem{{Source: path, Msg: fmt.Sprintf("cannot read %s config: %v", layer, err)}}}
	}
	l.Files = append(l.Files, File{Layer: layer, Path: path})
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // editors on some systems add a BOM
	var fresh Config
	entries, probs := parseFile(path, data, &fresh)
	if len(probs) > 0 {
		return &Error{Problems: probs}
	}
	probs = l.apply(path, layer, mode, entries, reflect.ValueOf(&fresh).Elem())
	if len(probs) > 0 {
		return &Error{Problems: probs}
	}
	return nil
}

// parseFile decodes data strictly into fresh and lists the keys it sets.
func parseFile(path string, data []byte, fresh *Config) ([]entry, []Problem) {
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(fresh)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	if err != nil && !errors.As(err, &strict) {
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, []Problem{decodeProblem(path, line, de)}
		}
		return nil, []Problem{{Source: path, Msg: err.Error()}}
	}
	entries, probs := keysOf(path, data)
	if len(probs) == 0 && strict != nil {
		// The schema walk should have caught these; report them anyway.
		for i := range strict.Errors {
			line, _ := strict.Errors[i].Position()
			probs = append(probs, Problem{Source: path, Line: line, Key: joinKey(strict.Errors[i].Key()), Msg: "unknown key"})
		}
	}
	return entries, probs
}

// tomlKind finds the TOML type named in go-toml's "cannot decode TOML
// <kind> ..." message.
func tomlKind(msg string) (string, bool) {
	const marker = "cannot decode TOML "
	i := strings.Index(msg, marker)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(marker):]
	n := 0
	for n < len(rest) && (isAlnum(rest[n]) || rest[n] == '_') {
		n++
	}
	return rest[:n], n > 0
}

func decodeProblem(path string, line int, de *toml.DecodeError) Problem {
	key := []string(de.Key())
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if kind, ok := tomlKind(msg); ok && len(key) > 0 {
		if r, bad := resolve(key); bad == "" {
			msg = fmt.Sprintf("wrong type: want %s, got a TOML %s", describe(r.typ), kind)
		}
	}
	return Problem{Source: path, Line: line, Key: joinKey(key), Msg: msg}
}

func describe(t reflect.Type) string {
	switch {
	case t == headersType:
		return "a table of strings"
	case isContainer(t):
		return "a table"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "a boolean (true or false)"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return "an array of strings"
}

// keysOf walks the syntax tree for every key and table with its line, and
// maps each onto the schema.
func keysOf(path string, data []byte) ([]entry, []Problem) {
	var p unstable.Parser
	p.Reset(data)
	var entries []entry
	var probs []Problem
	add := func(parts []string, line int) {
		r, bad := resolve(parts)
		if bad != "" {
			probs = append(probs, Problem{Source: path, Line: line, Key: joinKey(parts), Msg: bad})
			return
		}
		entries = append(entries, entry{r: r, line: line})
	}
	var walkKV func(prefix []string, kv *unstable.Node)
	walkKV = func(prefix []string, kv *unstable.Node) {
		parts, line := keyParts(&p, kv.Key())
		parts = append(append([]string(nil), prefix...), parts...)
		add(parts, line)
		if v := kv.Value(); v.Kind == unstable.InlineTable {
			it := v.Children()
			for it.Next() {
				walkKV(parts, it.Node())
			}
		}
	}
	var prefix []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var line int
			prefix, line = keyParts(&p, e.Key())
			add(prefix, line)
			if e.Kind == unstable.ArrayTable && len(entries) > 0 && entries[len(entries)-1].line == line {
				entries[len(entries)-1].array = true
			}
		case unstable.KeyValue:
			walkKV(prefix, e)
		}
	}
	return entries, probs
}

func keyParts(p *unstable.Parser, it unstable.Iterator) ([]string, int) {
	var parts []string
	line := 0
	for it.Next() {
		n := it.Node()
		if line == 0 {
			line = p.Shape(n.Raw).Start.Line
		}
		parts = append(parts, string(n.Data))
	}
	return parts, line
}
