package proc

import "os/exec"

// Reaped is how many children this Reaper has collected.
func (r *Reaper) Reaped() int64 { return r.reaped.Load() }

// StartTracked starts cmd the way the containment does (its PID in the
// registry a Reaper leaves to cmd.Wait); call the returned function after
// cmd.Wait has returned.
func StartTracked(cmd *exec.Cmd) (untrackFn func(), err error) {
	if err := startTracked(cmd, nil); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	return func() { untrack(pid) }, nil
}
