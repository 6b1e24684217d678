// Package skill holds the read_skill tool, which returns the SKILL.md of a
// skill discovered at session start (internal/skill). It accepts only a
// discovered name, never a path, and re-checks at read time that the skill
// still lies inside the root it was discovered under.
package skill

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	skillset "github.com/scv-agent/scv/internal/skill"
	"github.com/scv-agent/scv/internal/textcut"
	"github.com/scv-agent/scv/internal/tool"
)

//go:embed read_skill.md
var description string

// DefaultMaxBytes is skills.max_skill_bytes.
const DefaultMaxBytes = 262144

// Options configure read_skill.
type Options struct {
	// Set is the session's discovered skills; nil means none.
	Set *skillset.Set
	// MaxBytes is skills.max_skill_bytes; zero means DefaultMaxBytes.
	MaxBytes int
}

// Params is the input of read_skill.
type Params struct {
	Name string `json:"name" jsonschema:"a skill name exactly as listed in the system prompt"`
}

// Result is the JSON output of read_skill.
type Result struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

// New returns the read_skill tool.
func New(opts Options) tool.Tool {
	return tool.WithRiskClass(newTool(opts), "read_only")
}

func newTool(opts Options) tool.Tool {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	desc := strings.ReplaceAll(description, "{{MAX}}", strconv.Itoa(opts.MaxBytes))
	return tool.MustDefine("read_skill", desc, nil, func(env tool.Env, p Params) (tool.Plan, error) {
		sk, ok := opts.Set.Lookup(p.Name)
		if !ok {
			return tool.Plan{}, unknown(opts.Set, p.Name)
		}
		return tool.Plan{
			Risk:    tool.ReadOnly,
			Summary: "read skill " + sk.Name,
			Run: func(ctx context.Context) tool.Result {
				if ctx.Err() != nil {
					return tool.Fail(tool.Cancelled, "read_skill %s: cancelled", sk.Name)
				}
				return read(sk, opts.MaxBytes, env.OutputLimit)
			},
		}, nil
	})
}

// knownShown bounds how many names an unknown-name error lists.
const knownShown = 10

func unknown(set *skillset.Set, name string) *tool.Error {
	names := set.Names()
	if len(names) == 0 {
		return tool.Errorf(tool.InvalidArguments, "unknown skill %q: no skills were discovered in this session", name)
	}
	more := ""
	if len(names) > knownShown {
		more = fmt.Sprintf(" (and %d more)", len(names)-knownShown)
		names = names[:knownShown]
	}
	return tool.Errorf(tool.InvalidArguments, "unknown skill %q; use a name listed in the system prompt, such as: %s%s", name, strings.Join(names, ", "), more)
}

// read opens SKILL.md through an os.Root on the skill's original root, so a
// symbolic link swapped in after discovery cannot lead the read elsewhere.
func read(sk skillset.Skill, maxBytes, outputLimit int) tool.Result {
	root, err := os.OpenRoot(sk.Root)
	if err != nil {
		return tool.Fail(tool.Failed, "skill %q: its root %s cannot be opened (%v); it may have been removed since the session started", sk.Name, sk.Root, err)
	}
	defer root.Close()
	if want := sk.RootInfo(); want != nil {
		got, err := root.Stat(".")
		if err != nil || !os.SameFile(got, want) {
			return tool.Fail(tool.Failed, "skill %q: its root %s was replaced since the session started; refused", sk.Name, sk.Root)
		}
	}
	rel, err := filepath.Rel(sk.Root, sk.Dir)
	if err != nil {
		return tool.Fail(tool.Failed, "skill %q: %v", sk.Name, err)
	}
	name := filepath.Join(rel, skillset.FileName)
	f, err := root.OpenFile(name, readFlags, 0)
	if err != nil {
		if escapes(err) {
			return tool.Fail(tool.Failed, "skill %q now resolves outside its root %s (a symbolic link changed since discovery); refused", sk.Name, sk.Root)
		}
		return tool.Fail(tool.Failed, "skill %q: %v", sk.Name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return tool.Fail(tool.Failed, "skill %q: %s is not a regular file", sk.Name, skillset.FileName)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return tool.Fail(tool.Failed, "skill %q: read %s: %v", sk.Name, skillset.FileName, err)
	}
	truncated := len(b) > maxBytes
	if truncated {
		b = textcut.TrimEnd(b[:maxBytes])
	}
	res := Result{Name: sk.Name, Path: filepath.Join(sk.Dir, skillset.FileName), Content: strings.ToValidUTF8(string(b), "\uFFFD"), Truncated: truncated}
	return encode(res, outputLimit)
}

// encode keeps the JSON result within outputLimit (tools.output_limit_bytes,
// 0: none) by shortening the content, so it stays valid JSON.
func encode(res Result, outputLimit int) tool.Result {
	if outputLimit > 0 {
		// The fixed part is sized with "truncated":false, the longer value.
		empty := res
		empty.Content, empty.Truncated = "", false
		head := tool.JSONWithin(true, "", empty, false, outputLimit)
		if !head.Success {
			return head
		}
		if fit := tool.FitJSON(res.Content, outputLimit-len(head.Output)); fit != res.Content {
			res.Content, res.Truncated = fit, true
		}
	}
	return tool.JSONResult(true, "", res, res.Truncated)
}

// escapes reports whether err is os.Root refusing a path that leaves the root.
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}
