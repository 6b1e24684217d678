//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArch is the audit architecture the filter accepts.
const (
	seccompArch = unix.AUDIT_ARCH_AARCH64
	x32Bit      = 0
)
