//go:build unix

package skill

import (
	"os"
	"syscall"
)

// readFlags opens without blocking on a FIFO; the file is then refused unless
// it is a regular file.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
