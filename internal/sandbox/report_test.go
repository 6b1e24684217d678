package sandbox

import (
	"strings"
	"testing"
)

// TestMissingPerKernel: which rules a command would run without, for each
// kernel generation; TCP and unix sockets fall back to seccomp, and the
// refused cross-directory renames of ABI 1 are not a gap.
func TestMissingPerKernel(t *testing.T) {
	cases := []struct {
		rep     Report
		network bool
		want    []string // prefixes of the missing rules, in order
	}{
		{Report{Available: true, ABI: 7, Errata: 7, Seccomp: true}, false, nil},
		{Report{Available: true, ABI: 6, Errata: 0, Seccomp: true}, false, []string{"IPC: signals"}},
		{Report{Available: true, ABI: 4, Seccomp: true}, false, []string{"IPC: signals"}},
		{Report{Available: true, ABI: 1, Seccomp: true}, false, []string{"filesystem: truncate", "IPC: signals"}},
		{Report{Available: true, ABI: 3, Seccomp: false}, false, []string{"network: no TCP", "network: no UDP", "IPC: no connecting", "IPC: abstract", "IPC: signals"}},
		{Report{Available: true, ABI: 3, Seccomp: false}, true, []string{"IPC: no connecting", "IPC: abstract", "IPC: signals"}},
		{Report{Available: true, ABI: 9, Errata: 7, Seccomp: false}, true, nil},
	}
	for _, c := range cases {
		got := c.rep.Missing(c.network)
		if len(got) != len(c.want) {
			t.Errorf("ABI %d seccomp %v network %v: missing %q, want %q", c.rep.ABI, c.rep.Seccomp, c.network, got, c.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("ABI %d: missing[%d] = %q, want %q…", c.rep.ABI, i, got[i], c.want[i])
			}
		}
	}
	text := Report{Available: true, ABI: 1, Seccomp: true}.Text(false)
	if !strings.Contains(text, "refused      filesystem: move and link") || !strings.Contains(text, "NOT enforced filesystem: truncate") {
		t.Errorf("report text:\n%s", text)
	}
	if got := (Report{Reason: "no Landlock"}).Text(false); got != "sandbox: unavailable (no Landlock)\n" {
		t.Errorf("unavailable text %q", got)
	}
}

func TestWrapRefusesWhatTheKernelCannotDo(t *testing.T) {
	rep := Probe()
	cmd, err := Wrap(Config{Mode: ModeWorkspaceWrite}, "/ws", "/bin/true", nil, nil)
	cmd.Close()
	switch {
	case !rep.Available && err == nil:
		t.Error("Wrap succeeded on a kernel without Landlock")
	case rep.Available && len(rep.Missing(false)) == 0 && err != nil:
		t.Errorf("Wrap failed on a kernel that enforces everything: %v", err)
	}
}
