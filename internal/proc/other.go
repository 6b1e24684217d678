//go:build !linux && !darwin && !freebsd

package proc

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// SCV supervises processes on Linux, macOS and FreeBSD; elsewhere the
// package builds but refuses to run anything.

var errUnsupported = fmt.Errorf("process supervision: %w on this system", errors.ErrUnsupported)

func run(context.Context, Spec) (Result, error) { return Result{}, errUnsupported }

// StartTime is unsupported on this system.
func StartTime(int) (uint64, error) { return 0, errUnsupported }

// Alive is unsupported on this system and reports false.
func Alive(int, uint64) bool { return false }

// SignalVerified is unsupported on this system.
func SignalVerified(int, uint64, syscall.Signal) error { return errUnsupported }

// StopGroup is unsupported on this system and does nothing.
func StopGroup(int, time.Duration) {}

// BecomeSubreaper is unsupported on this system.
func BecomeSubreaper() error { return errUnsupported }

// Run returns when ctx is done; there is nothing to reap on this system.
func (r *Reaper) Run(ctx context.Context) { <-ctx.Done() }

// ReapOnce reaps nothing on this system.
func (r *Reaper) ReapOnce() int { return 0 }

// EnvTagged finds nothing on this system, macOS and FreeBSD.
func EnvTagged(string, func(string) bool) []Ident { return nil }

// StopTagged does nothing on this system, macOS and FreeBSD.
func StopTagged(string, time.Duration) {}

func start(Spec) (*Child, error) { return nil, errUnsupported }

// These systems have nothing to contain children with.
type containPlatform struct{}

func (containPlatform) close() {}

// NewContainment gives the group-and-tag mechanism on this system (which
// runs nothing anyway); any other explicit choice is refused.
func NewContainment(opts ContainOptions) (*Containment, error) {
	if opts.Want != "" && opts.Want != MechAuto && opts.Want != MechGroupTag {
		return nil, fmt.Errorf("process tracking by %s: %w", opts.Want, errUnsupported)
	}
	return &Containment{mech: MechGroupTag}, nil
}

// Reconcile does nothing on this system.
func (c *Containment) Reconcile() (int, error) { return 0, nil }
