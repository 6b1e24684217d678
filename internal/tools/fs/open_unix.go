//go:build unix

package fs

import (
	"os"
	"syscall"
)

// readFlags opens without blocking on a FIFO or device; the opened file is
// then refused unless it is a regular file.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
