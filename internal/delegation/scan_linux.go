package delegation

import (
	"bytes"
	"os"
	"strconv"

	"github.com/scv-agent/scv/internal/proc"
)

// scanTagged finds the live processes whose environment carries an
// SCV_PARENT naming handle, with their start times (read before the
// environment, so a PID reused in between does not match later).
func scanTagged(handle string) []ident {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	key := []byte(EnvParent + "=")
	var out []ident
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		start, err := proc.StartTime(pid)
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, key); ok && Tagged(string(v), handle) {
				if proc.Alive(pid, start) {
					out = append(out, ident{pid: pid, start: start})
				}
				break
			}
		}
	}
	return out
}
