//go:build !freebsd

package store

import "syscall"

// fileSizeLimit is an RLIMIT_FSIZE of n bytes.
func fileSizeLimit(n int64) *syscall.Rlimit { return &syscall.Rlimit{Cur: uint64(n), Max: uint64(n)} }
