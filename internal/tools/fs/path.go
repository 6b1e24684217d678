// Package fs holds the workspace file tools `read` and `write`. Every byte of
// workspace I/O goes through an os.Root opened on the session's workspace, so
// `..`, absolute paths and symbolic links that lead outside the workspace are
// refused by the kernel-backed resolution of os.Root, including links swapped
// in while a call runs. Writes go to a temporary file in the destination
// directory (named with the reserved prefix ".scv-tmp-", which both tools
// refuse), are flushed and then installed atomically.
package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/scv-agent/scv/internal/tool"
)

// Options are the byte ceilings of the file tools.
type Options struct {
	// MaxReadBytes is tools.max_read_bytes: the default and the cap of
	// read's limit. Zero means DefaultMaxReadBytes.
	MaxReadBytes int
	// MaxWriteBytes is tools.max_write_bytes: the largest content write
	// accepts. Zero means DefaultMaxWriteBytes.
	MaxWriteBytes int
}

// Defaults of the [tools] keys (docs/configuration.md).
const (
	DefaultMaxReadBytes  = 262144
	DefaultMaxWriteBytes = 1048576
)

func (o Options) withDefaults() Options {
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxWriteBytes <= 0 {
		o.MaxWriteBytes = DefaultMaxWriteBytes
	}
	return o
}

// TempPrefix starts the name of every temporary file a write creates. Both
// tools refuse paths with a component that starts with it, so a temporary
// file left behind by a killed writer is never read as if it were content.
const TempPrefix = ".scv-tmp-"

// cleanPath checks a model-supplied workspace-relative path lexically and
// returns it cleaned, in slash form. os.Root does the authoritative check
// when the path is used.
func cleanPath(p string) (string, *tool.Error) {
	switch {
	case p == "":
		return "", tool.Errorf(tool.InvalidArguments, "`path` is empty; give a workspace-relative file path such as src/main.go")
	case strings.ContainsRune(p, 0):
		return "", tool.Errorf(tool.InvalidArguments, "`path` contains a NUL byte; give a workspace-relative file path")
	case strings.HasPrefix(p, "/"):
		return "", outside(p, "absolute paths are refused, even inside the workspace; give the path relative to the workspace root")
	}
	if strings.HasSuffix(p, "/") {
		return "", tool.Errorf(tool.InvalidArguments, "path %q ends in \"/\", which names a directory; name a file", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", outside(p, "it climbs out with \"..\"; give the path relative to the workspace root")
	}
	if c == "." {
		return "", tool.Errorf(tool.InvalidArguments, "path %q names the workspace directory itself; name a file inside it", p)
	}
	for _, part := range strings.Split(c, "/") {
		if strings.HasPrefix(part, TempPrefix) {
			return "", tool.Errorf(tool.InvalidArguments, "path %q uses the reserved prefix %q of in-progress writes; choose another name", p, TempPrefix)
		}
	}
	return c, nil
}

func outside(p, why string) *tool.Error {
	return tool.Errorf(tool.InvalidArguments, "path %q must stay inside the workspace: %s", p, why)
}

// SecretLike reports whether a workspace-relative path looks like it holds a
// secret (tool.SecretLike, which the approval rules share). It is a
// visibility heuristic, not a confidentiality boundary.
func SecretLike(p string) bool { return tool.SecretLike(p) }

// secretTarget says rel, once its symbolic links are resolved, is a
// secret-like path of the workspace: an innocent name may point at .env.
// A path that does not resolve (missing, or leading outside, which read
// refuses anyway) is judged by its name alone.
func secretTarget(workspace, rel string) bool {
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(ws, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	target, err := filepath.Rel(ws, real)
	if err != nil || !filepath.IsLocal(target) {
		return false
	}
	return SecretLike(filepath.ToSlash(target))
}

// escapes reports whether err is os.Root refusing a path that leaves the
// root (errPathEscapes is unexported, so its text is matched).
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// ioFail turns an error of a workspace operation into the failed result the
// model sees. os.Root errors carry only the relative name, never the
// absolute workspace path.
func ioFail(rel string, err error) tool.Result {
	var errno syscall.Errno
	switch {
	case escapes(err):
		return tool.Fail(tool.InvalidArguments, "path %q must stay inside the workspace: it resolves through a symbolic link that leads outside (or is absolute); use a path whose every component stays inside", rel)
	case errors.Is(err, fs.ErrNotExist):
		return tool.Fail(tool.Failed, "%q does not exist (a missing file, missing parent directory or dangling symbolic link); check the path", rel)
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return tool.Fail(tool.Failed, "%q: a parent component is not a directory", rel)
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		return tool.Fail(tool.Failed, "%q: too many levels of symbolic links", rel)
	}
	return tool.Fail(tool.Failed, "%s", strings.TrimSpace(err.Error()))
}

// openRoot opens the session workspace as an os.Root.
func openRoot(workspace string) (*os.Root, *tool.Result) {
	if workspace == "" {
		r := tool.Fail(tool.Unavailable, "no workspace is set for this session")
		return nil, &r
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		r := tool.Fail(tool.Failed, "open workspace: %v", err)
		return nil, &r
	}
	return root, nil
}

func describeKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("not a regular file (%s)", m.Type())
}
