//go:build !linux

package hooks

import "os"

// inputFile is a file holding data, read from its start: the hook's
// standard input (a file, so nothing of SCV blocks on a hook that does not
// read it). It is an unlinked temporary file.
func inputFile(data []byte) (*os.File, error) { return tempInputFile(data) }
