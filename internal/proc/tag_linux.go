package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ident is a process by PID and start time.
type ident struct {
	pid   int
	start uint64
}

// tagged lists the live processes (other than this one) whose environment
// holds the exact entry tag ("KEY=VALUE"), with their start times.
func tagged(tag string) []ident {
	names, err := readProcNames()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(tag)
	var out []ident
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		// The start time is read before the environment, so a PID reused
		// in between never matches later.
		st, err := readStat(pid)
		if err != nil || st.dead() {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, ident{pid: pid, start: st.start})
				break
			}
		}
	}
	return out
}

// StopTagged stops every process whose environment holds the entry tag:
// TERM (and CONT), up to grace for them to go, then KILL, each signal sent
// only to the process identified by PID and start time. Tagged processes
// may fork while they are being stopped, so it rescans a few times.
func StopTagged(tag string, grace time.Duration) {
	for range 3 {
		ids := tagged(tag)
		if len(ids) == 0 {
			return
		}
		for _, id := range ids {
			_ = SignalVerified(id.pid, id.start, syscall.SIGTERM)
			_ = SignalVerified(id.pid, id.start, syscall.SIGCONT)
		}
		deadline := time.Now().Add(grace)
		step := time.Millisecond
		for anyIdentAlive(ids) && time.Now().Before(deadline) {
			time.Sleep(min(step, time.Until(deadline)))
			step = min(step*2, 25*time.Millisecond)
		}
		for _, id := range ids {
			_ = SignalVerified(id.pid, id.start, syscall.SIGKILL)
		}
	}
}

func anyIdentAlive(ids []ident) bool {
	for _, id := range ids {
		if Alive(id.pid, id.start) {
			return true
		}
	}
	return false
}
