//go:build !unix

package skill

import "os"

const readFlags = os.O_RDONLY
