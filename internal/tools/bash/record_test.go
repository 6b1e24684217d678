package bash

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/tool"
)

// fakeRecorder notes what the tool told it, in order.
type fakeRecorder struct {
	events []string
	tag    string
	fail   bool
}

func (f *fakeRecorder) BeginCall(tag, session, callID string) (func(int), func(), error) {
	if f.fail {
		return nil, nil, errors.New("disk full")
	}
	f.tag = tag
	f.events = append(f.events, "begin "+session+" "+callID)
	return func(pid int) {
			if pid > 0 {
				f.events = append(f.events, "started")
			}
		}, func() {
			f.events = append(f.events, "done")
		}, nil
}

// TestCallsAreRecorded: the record is begun before the command runs,
// names the call's tag, learns the leader's PID and is done after the
// call; a call that cannot be recorded does not run.
func TestCallsAreRecorded(t *testing.T) {
	rec := &fakeRecorder{}
	env := callEnv(t)
	res := plan(t, newRegistry(t, Options{Recorder: rec}), env, args(`printf '%s' "$SCV_BASH_CALL" > tag`)).Run(t.Context())
	if !res.Success {
		t.Fatalf("result %+v", res)
	}
	if got := strings.Join(rec.events, ", "); got != "begin s c, started, done" {
		t.Errorf("recorder saw %q", got)
	}
	b, _ := os.ReadFile(filepath.Join(env.Workspace, "tag"))
	if rec.tag != TagKey+"="+string(b) || len(b) < 16 {
		t.Errorf("recorded tag %q, the command's tag %q", rec.tag, b)
	}

	failing := &fakeRecorder{fail: true}
	res = plan(t, newRegistry(t, Options{Recorder: failing}), env, args("touch ran")).Run(t.Context())
	if res.Success || res.Error != tool.Failed || !strings.Contains(res.Output, "disk full") {
		t.Errorf("unrecordable call: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "ran")); err == nil {
		t.Error("a call that could not be recorded ran")
	}
}
