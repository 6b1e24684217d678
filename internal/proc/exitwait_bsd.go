//go:build darwin || freebsd

package proc

import "os/exec"

// waitLeader is cmd.Wait here: there is no pidfd to poll.
func waitLeader(cmd *exec.Cmd) error { return cmd.Wait() }
