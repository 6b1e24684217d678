//go:build linux && !amd64 && !arm64

package sandbox

// No filter is written for this architecture: Probe reports seccomp as
// unavailable, so the rules it enforces count as missing.
const (
	seccompArch = 0
	x32Bit      = 0
)
