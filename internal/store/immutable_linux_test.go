//go:build linux

package store

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// setImmutable sets the file system's immutable flag on path (root is not
// stopped by modes) and clears it at cleanup; it skips the test where the
// file system has no such flag.
func setImmutable(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Skipf("running as root on a file system without file flags (%v): cannot make %s read-only", err, path)
	}
	const immutable = 0x10 // FS_IMMUTABLE_FL
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|immutable)); err != nil {
		t.Skipf("running as root and cannot set the immutable flag (%v): cannot make %s read-only", err, path)
	}
	t.Cleanup(func() {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags)); err != nil {
			t.Errorf("clear the immutable flag of %s: %v", path, err)
		}
	})
}
