package store

import "syscall"

// fileSizeLimit is an RLIMIT_FSIZE of n bytes (FreeBSD's limits are int64).
func fileSizeLimit(n int64) *syscall.Rlimit { return &syscall.Rlimit{Cur: n, Max: n} }
