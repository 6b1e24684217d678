//go:build darwin || freebsd

package proc

// onMainThread is never needed here: only Linux confines a start
// (Spec.Confine comes from the Linux sandbox).
func onMainThread() bool { return false }
