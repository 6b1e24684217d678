//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArch is the audit architecture the filter accepts; x32Bit marks
// x32 system call numbers, refused.
const (
	seccompArch = unix.AUDIT_ARCH_X86_64
	x32Bit      = 0x40000000
)
