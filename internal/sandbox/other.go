//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// Probe reports the sandbox unavailable: only Linux has Landlock.
func Probe() Report {
	return Report{Reason: fmt.Sprintf("SCV's sandbox needs Linux Landlock; %s has none SCV uses", runtime.GOOS)}
}

func confiner(Policy, Report) (func() error, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, Probe().Reason)
}

func confineAndExec(Policy, []string) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, Probe().Reason)
}
