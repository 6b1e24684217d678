package proc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsePSEnv is the macOS and FreeBSD tag scan; its input is ps(1) output,
// so it is tested here on any system.
func TestParsePSEnv(t *testing.T) {
	out := []byte(`    1     1 /sbin/launchd
  310   310 /bin/bash -lc sleep 100 HOME=/Users/ada SCV_TAG=run-1 PATH=/usr/bin
  311   310 sleep 100 SCV_TAG=run-1
  312   312 SCV_TAG=run-1 sleep 5
  400   400 /bin/zsh SCV_TAG=run-10 TERM=xterm
  401   401 grep SCV_TAG=run-1x
  402   402 env XSCV_TAG=run-1
  999   999 /usr/local/bin/scv run SCV_TAG=run-1
  bad  line SCV_TAG=run-1
  500
`)
	got := parsePSEnv(out, "SCV_TAG", func(v string) bool { return v == "run-1" }, 999)
	if d := cmp.Diff([]int{310, 311, 312}, got); d != "" {
		t.Errorf("pids (-want +got):\n%s", d)
	}
	if got := parsePSEnv(out, "SCV_TAG", func(string) bool { return false }, 999); len(got) != 0 {
		t.Errorf("a predicate matching nothing found %v", got)
	}
}
