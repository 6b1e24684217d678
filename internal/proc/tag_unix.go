//go:build linux || darwin || freebsd

package proc

import (
	"strings"
	"syscall"
	"time"
)

// EnvTagged lists the live processes other than this one whose environment
// holds an entry KEY=VALUE with match(VALUE), each with its start time. On
// Linux the environments are read from /proc; on macOS and FreeBSD from
// ps(1), which shows the environments of this user's processes only (all of
// them for root).
func EnvTagged(key string, match func(value string) bool) []Ident {
	return envTagged(key, match)
}

// StopTagged stops every process whose environment holds the entry tag
// ("KEY=VALUE"): TERM (and CONT), up to grace for them to go, then KILL,
// each signal sent only to the process identified by PID and start time.
// Tagged processes may fork while they are being stopped, so it rescans a
// few times.
func StopTagged(tag string, grace time.Duration) {
	key, value, _ := strings.Cut(tag, "=")
	for range 3 {
		ids := envTagged(key, func(v string) bool { return v == value })
		if len(ids) == 0 {
			return
		}
		for _, id := range ids {
			_ = SignalVerified(id.PID, id.Start, syscall.SIGTERM)
			_ = SignalVerified(id.PID, id.Start, syscall.SIGCONT)
		}
		deadline := time.Now().Add(grace)
		step := time.Millisecond
		for anyIdentAlive(ids) && time.Now().Before(deadline) {
			time.Sleep(min(step, time.Until(deadline)))
			step = min(step*2, 25*time.Millisecond)
		}
		for _, id := range ids {
			_ = SignalVerified(id.PID, id.Start, syscall.SIGKILL)
		}
	}
}

func anyIdentAlive(ids []Ident) bool {
	for _, id := range ids {
		if Alive(id.PID, id.Start) {
			return true
		}
	}
	return false
}
