package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// `scv --version` prints exactly what `scv version` prints; the flag
// belongs to the root command only.
func TestVersionFlag(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(t.Context(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
		return code, out.String(), errb.String()
	}
	code, want, stderr := run("version")
	if code != ExitOK || stderr != "" {
		t.Fatalf("scv version: exit %d, stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`^scv \S+ \(commit \S+, go\S+, \w+/\w+\)\n$`).MatchString(want) {
		t.Fatalf("scv version printed %q", want)
	}
	code, got, stderr := run("--version")
	if code != ExitOK || stderr != "" || got != want {
		t.Errorf("scv --version: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, got, stderr, want)
	}
	code, got, stderr = run("tools", "--version")
	if code != ExitUsage || got != "" || !strings.Contains(stderr, "unknown flag: --version") {
		t.Errorf("scv tools --version: exit %d, stdout %q, stderr %q; want a usage error", code, got, stderr)
	}
}
