package hooks

import (
	"testing"
)

// BenchmarkRunNoop is one run of a no-op hook (/bin/true) with a pre_tool
// event: the event file, the process in its group, the tag sweep.
//
//	go test ./internal/hooks -run '^$' -bench RunNoop
func BenchmarkRunNoop(b *testing.B) {
	r := New(Options{Hooks: []Hook{{Name: "noop", Event: PreTool, Command: []string{"/bin/true"}}}, Env: []string{"PATH=/usr/bin:/bin"}, Workspace: b.TempDir(), SessionID: "s1"})
	in := preTool("bash")
	for b.Loop() {
		if d := r.Run(b.Context(), in, nil); d.Deny {
			b.Fatal(d.Reason)
		}
	}
}
