//go:build !linux

package store

import "testing"

// setImmutable is Linux-only (FS_IOC_SETFLAGS); elsewhere a test that needs
// a file root cannot write is skipped.
func setImmutable(t *testing.T, path string) {
	t.Helper()
	t.Skipf("running as root: cannot make %s read-only on this system", path)
}
