//go:build !linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// SCV supervises processes on Linux only (process groups, /proc identity,
// subreaping); elsewhere the package builds but refuses to run anything.

var errUnsupported = fmt.Errorf("process supervision: %w on this system", errors.ErrUnsupported)

func run(context.Context, Spec) (Result, error) { return Result{}, errUnsupported }

// StartTime is unsupported outside Linux.
func StartTime(int) (uint64, error) { return 0, errUnsupported }

// Alive is unsupported outside Linux and reports false.
func Alive(int, uint64) bool { return false }

// SignalVerified is unsupported outside Linux.
func SignalVerified(int, uint64, syscall.Signal) error { return errUnsupported }

// StopGroup is unsupported outside Linux and does nothing.
func StopGroup(int, time.Duration) {}

// BecomeSubreaper is unsupported outside Linux.
func BecomeSubreaper() error { return errUnsupported }

// StartTracked starts cmd; there is no Reaper to hide it from outside Linux.
func StartTracked(cmd *exec.Cmd) (func(), error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// Run returns when ctx is done; there is nothing to reap outside Linux.
func (r *Reaper) Run(ctx context.Context) { <-ctx.Done() }

// ReapOnce reaps nothing outside Linux.
func (r *Reaper) ReapOnce() int { return 0 }

// StopTagged does nothing outside Linux.
func StopTagged(string, time.Duration) {}

func start(Spec) (*Child, error) { return nil, errUnsupported }
