package fs

import (
	"os"
	"path/filepath"
	"strconv"
)

// openedSecret says the file f, opened through the workspace root, is at
// a secret-like path of the workspace: the kernel's name for the open
// descriptor is what was really opened, whatever links led to it.
func openedSecret(f *os.File, workspace string) bool {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return false
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(ws, real)
	return err == nil && filepath.IsLocal(rel) && SecretLike(filepath.ToSlash(rel))
}
