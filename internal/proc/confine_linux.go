package proc

import "syscall"

// onMainThread says the calling goroutine runs on the process's main
// thread, which the runtime parks, rather than ends, when a goroutine
// locked to it exits.
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
