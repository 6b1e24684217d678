package bash

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestResultFitsAfterEncoding: whatever a command prints, the encoded
// result fits the output limit, stays valid JSON and keeps the end of the
// output. Escaping grows text: a newline takes 2 bytes in JSON, a control
// byte or an invalid UTF-8 byte 6.
func TestResultFitsAfterEncoding(t *testing.T) {
	tests := []struct {
		name, command, end string
		limit              int
	}{
		{"seq then a final line", "seq 1 100000; echo FINAL_LINE", "FINAL_LINE\n", 65536},
		{"seq at a small limit", "seq 1 100000; echo FINAL_LINE", "FINAL_LINE\n", 1000},
		{"only newlines", "yes '' | head -n 200000; printf END", "END", 65536},
		{"control bytes", `head -c 200000 /dev/zero | tr '\0' '\1'; printf END`, "END", 65536},
		{"invalid UTF-8", `head -c 100000 /dev/zero | tr '\0' '\377'; printf END`, "END", 4096},
		{"quotes and backslashes", `for i in $(seq 1 30000); do printf '"\\'; done; printf END`, "END", 8192},
		{"html characters", `for i in $(seq 1 20000); do printf '<&>'; done; printf END`, "END", 8192},
		{"multi-byte text", `for i in $(seq 1 20000); do printf 'é漢👍'; done; printf END`, "END", 3001},
		{"just under the limit raw", "head -c 65500 /dev/zero | tr '\\0' '\\n'; printf END", "END", 65536},
		{"tiny limit", "seq 1 1000", "", 70},
		{"limit below the result's fixed part", "echo hi", "", 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := callEnv(t)
			env.OutputLimit = tc.limit
			res := plan(t, newRegistry(t, Options{}), env, args(tc.command)).Run(t.Context())
			testutil.Fits(t, tc.command, res, tc.limit)
			if tc.end == "" {
				return
			}
			d := decode(t, res)
			if !strings.HasSuffix(d.Out.Output, tc.end) {
				t.Errorf("the output lost its end %q: …%q", tc.end, d.Out.Output[max(0, len(d.Out.Output)-80):])
			}
			if !d.Out.Truncated || !res.Truncated || !strings.Contains(d.Out.Output, " bytes cut …]") {
				t.Errorf("a cut output must say so: truncated %v/%v, output …%q", d.Out.Truncated, res.Truncated, d.Out.Output[max(0, len(d.Out.Output)-200):])
			}
		})
	}
}
