package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// landlockABI asks the kernel for its Landlock ABI version and errata.
func landlockABI() (abi, errata int, err error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, 0, e
	}
	er, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
	if e != 0 {
		er = 0
	}
	return int(v), int(er), nil
}

// Probe asks the running kernel what it can enforce.
func Probe() Report {
	r := Report{Seccomp: seccompArch != 0}
	abi, errata, err := landlockABI()
	switch {
	case err == unix.ENOSYS:
		r.Reason = "this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)"
	case err == unix.EOPNOTSUPP:
		r.Reason = "Landlock is disabled in this kernel: add landlock to the lsm= boot parameter"
	case err != nil:
		r.Reason = fmt.Sprintf("cannot query Landlock: %v", err)
	default:
		r.Available, r.ABI, r.Errata = true, abi, errata
	}
	return r
}
