package hooks

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// inputFile is a file holding data, read from its start: the hook's
// standard input (a file, so nothing of SCV blocks on a hook that does not
// read it, and a hook may read it more than once). It lives in memory
// (memfd_create): no directory entry, nothing written to a disk; where
// the kernel refuses memfd_create it is an unlinked temporary file.
func inputFile(data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("scv-hook-event", unix.MFD_CLOEXEC)
	if err != nil {
		return tempInputFile(data)
	}
	f := os.NewFile(uintptr(fd), "scv-hook-event")
	if err := fill(f, data); err != nil {
		f.Close()
		return nil, fmt.Errorf("the event's input file: %w", err)
	}
	return f, nil
}
