//go:build !unix

package fs

import "os"

const readFlags = os.O_RDONLY
