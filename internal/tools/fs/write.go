package fs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/filechange"
	"github.com/scv-agent/scv/internal/tool"
)

//go:embed write.md
var writeDescription string

// WriteParams is the input of `write`.
type WriteParams struct {
	Path           string `json:"path" jsonschema:"workspace-relative path of the file"`
	Content        string `json:"content" jsonschema:"the complete new content of the file"`
	Mode           string `json:"mode" jsonschema:"create (the path must not exist) or replace (the file must exist)"`
	ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"replace only: lowercase hex SHA-256 the file must still have"`
}

// WriteResult is the JSON output of `write` (docs/fs.md).
type WriteResult struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// chunkSize is how much content goes to the temporary file per write call;
// cancellation is checked between chunks.
const chunkSize = 64 << 10

type writer struct {
	max int
	// afterChunk, when set (tests only), runs after each chunk reaches the
	// temporary file, so a test can slow a write down or kill it midway.
	afterChunk func()
}

// NewWrite returns the `write` tool.
func NewWrite(opts Options) tool.Tool {
	return tool.WithRiskClass(newWriteTool(opts), "filesystem")
}

func newWriteTool(opts Options) tool.Tool {
	return newWrite(opts, nil)
}

func newWrite(opts Options, afterChunk func()) tool.Tool {
	w := &writer{max: opts.withDefaults().MaxWriteBytes, afterChunk: afterChunk}
	desc := strings.ReplaceAll(writeDescription, "{{MAX}}", strconv.Itoa(w.max))
	adjust := func(s *jsonschema.Schema) {
		s.Properties["mode"].Enum = []any{"create", "replace"}
		s.Properties["expected_sha256"].Pattern = "^[0-9a-fA-F]{64}$"
	}
	return tool.MustDefine("write", desc, adjust, w.plan)
}

func (w *writer) plan(env tool.Env, p WriteParams) (tool.Plan, error) {
	rel, terr := cleanPath(p.Path)
	if terr != nil {
		return tool.Plan{}, terr
	}
	if len(p.Content) > w.max {
		return tool.Plan{}, tool.Errorf(tool.Limit, "`content` is %d bytes, above tools.max_write_bytes (%d); write a smaller file", len(p.Content), w.max)
	}
	if p.Mode != "create" && p.Mode != "replace" {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "`mode` is %q; use create or replace", p.Mode)
	}
	want := strings.ToLower(p.ExpectedSHA256)
	if want != "" && p.Mode == "create" {
		return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "`expected_sha256` applies to mode replace only; drop it to create %q", rel)
	}
	ws, content, mode, limit, changed := env.Workspace, p.Content, p.Mode, env.OutputLimit, env.Changed
	paths := writePaths(ws, rel)
	guard := guardWhy(ws, paths)
	return tool.Plan{
		Risk:    tool.Filesystem,
		Summary: mode + " " + rel + " (" + strconv.Itoa(len(content)) + " bytes)",
		Diff:    preview(ws, rel, mode, content),
		// A guarded path (one that executes or configures, or looks
		// secret-like) is asked about every time.
		NoGrant:    guard != "",
		NoGrantWhy: guard,
		Paths:      paths,
		Run: func(ctx context.Context) tool.Result {
			if guard == "" {
				// A symbolic link swapped in since the plan was approved
				// (by a grant, perhaps) must not lead the write to a
				// guarded path.
				if now := guardWhy(ws, writePaths(ws, rel)); now != "" {
					return tool.Fail(tool.Denied, "write %s: refused, the path now leads somewhere else than when it was approved (%s); nothing was written", rel, now)
				}
			}
			return writeResult(w.write(ctx, ws, rel, mode, content, want, changed), limit)
		},
	}, nil
}

func (w *writer) write(ctx context.Context, workspace, rel, mode, content, want string, changed func(filechange.Change)) tool.Result {
	root, fail := openRoot(workspace)
	if fail != nil {
		return *fail
	}
	defer root.Close()
	dir := path.Dir(rel)
	perm := fs.FileMode(0o666)
	if mode == "replace" {
		fi, res, ok := existingFile(root, rel)
		if !ok {
			return res
		}
		perm = fi.Mode().Perm()
	} else {
		if _, err := root.Lstat(rel); err == nil {
			return tool.Fail(tool.Failed, "%q already exists; mode create never overwrites: read it and use mode replace with expected_sha256", rel)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ioFail(rel, err)
		}
		if err := root.MkdirAll(dir, 0o777); err != nil {
			return ioFail(dir, err)
		}
	}
	tmp, err := w.writeTemp(ctx, root, dir, content, perm, mode == "replace")
	if err != nil {
		if ctx.Err() != nil {
			return tool.Fail(tool.Cancelled, "write %s: cancelled; the file is unchanged", rel)
		}
		return ioFail(rel, err)
	}
	installed := false
	defer func() {
		if !installed {
			_ = root.Remove(tmp)
		}
	}()
	if ctx.Err() != nil {
		return tool.Fail(tool.Cancelled, "write %s: cancelled; the file is unchanged", rel)
	}
	var before filechange.Change
	if changed != nil {
		before = keepBefore(root, rel, mode)
	}
	if res, ok := w.install(root, rel, tmp, mode, want); !ok {
		return res
	}
	installed = true
	syncDir(root, dir)
	h := sha256.New()
	_, _ = io.WriteString(h, content)
	sum := hex.EncodeToString(h.Sum(nil))
	if changed != nil {
		before.After = sum
		changed(before)
	}
	return tool.JSONResult(true, "", WriteResult{Path: rel, Bytes: len(content), SHA256: sum}, false)
}

// writeResult keeps a successful write's result within limit (0: none):
// the write has happened, so a result too long for the limit (a path of
// thousands of bytes, a tiny limit) shortens the path, marked with "…",
// and never turns into a failure.
func writeResult(res tool.Result, limit int) tool.Result {
	if !res.Success || limit <= 0 || len(res.Output) <= limit {
		return res
	}
	var r WriteResult
	if err := json.Unmarshal([]byte(res.Output), &r); err != nil {
		return res
	}
	whole := r.Path
	r.Path = ""
	fixed, err := tool.EncodeJSON(r)
	if err != nil {
		return res
	}
	if budget := limit - len(fixed) - len("…"); budget >= 0 {
		r.Path = tool.FitJSON(whole, budget) + "…"
		return tool.JSONWithin(true, "", r, true, limit)
	}
	return tool.Result{Success: true, Output: "wrote " + strconv.Itoa(r.Bytes) + " bytes", Truncated: true}
}

// existingFile checks that rel is an existing regular file (not a symbolic
// link, whose replacement would replace the link rather than its target).
func existingFile(root *os.Root, rel string) (fs.FileInfo, tool.Result, bool) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, tool.Fail(tool.Failed, "%q does not exist; mode replace needs an existing file: use mode create for a new one", rel), false
	}
	if err != nil {
		return nil, ioFail(rel, err), false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := root.Readlink(rel)
		return nil, tool.Fail(tool.Failed, "%q is a symbolic link (to %q); write to the file it points to instead", rel, target), false
	}
	if !fi.Mode().IsRegular() {
		return nil, tool.Fail(tool.Failed, "%q is %s; write replaces regular files only", rel, describeKind(fi.Mode())), false
	}
	return fi, tool.Result{}, true
}

// writeTemp writes content to a new temporary file in dir, flushes it and
// returns its root-relative name. On replace the file gets exactly perm,
// independent of the umask.
func (w *writer) writeTemp(ctx context.Context, root *os.Root, dir, content string, perm fs.FileMode, exact bool) (string, error) {
	var f *os.File
	var name string
	for range 8 {
		name = path.Join(dir, TempPrefix+randomHex())
		var err error
		f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	if f == nil {
		return "", errors.New("create temporary file: names keep colliding")
	}
	err := w.fill(ctx, f, content)
	if err == nil && exact {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(name)
		return "", err
	}
	return name, nil
}

func (w *writer) fill(ctx context.Context, f io.Writer, content string) error {
	for off := 0; off < len(content); off += chunkSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := io.WriteString(f, content[off:min(off+chunkSize, len(content))]); err != nil {
			return err
		}
		if w.afterChunk != nil {
			w.afterChunk()
		}
	}
	return nil
}

// install checks the expected hash against the file as it is now and moves
// the temporary file into place: rename for replace, a hard link for create
// (link fails if the name appeared meanwhile, so nothing is clobbered).
func (w *writer) install(root *os.Root, rel, tmp, mode, want string) (tool.Result, bool) {
	if mode == "create" {
		err := root.Link(tmp, rel)
		if errors.Is(err, fs.ErrExist) {
			return tool.Fail(tool.Failed, "%q appeared while writing; mode create never overwrites: read it and use mode replace with expected_sha256", rel), false
		}
		if err != nil {
			return ioFail(rel, err), false
		}
		_ = root.Remove(tmp)
		return tool.Result{}, true
	}
	if _, res, ok := existingFile(root, rel); !ok {
		return res, false
	}
	if want != "" {
		got, err := fileHash(root, rel)
		if err != nil {
			return ioFail(rel, err), false
		}
		if got != want {
			return tool.Fail(tool.Failed, "%q changed since it was read: expected_sha256 is %s but the file now has sha256 %s; read it again and redo the edit", rel, want, got), false
		}
	}
	if err := root.Rename(tmp, rel); err != nil {
		return ioFail(rel, err), false
	}
	return tool.Result{}, true
}

func fileHash(root *os.Root, rel string) (string, error) {
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncDir flushes the directory entry of the installed file. A failure here
// does not undo the write, so it is not reported.
func syncDir(root *os.Root, dir string) {
	d, err := root.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
