package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestBashResultReachesTheModelWhole: `seq 1 100000; echo FINAL_LINE`
// prints far more than tools.output_limit_bytes. What the model receives
// is the bash result object as valid JSON within the limit, keeping the
// beginning and the end of the output (FINAL_LINE), not a text cut by the
// loop's last resort.
func TestBashResultReachesTheModelWhole(t *testing.T) {
	for _, limit := range []string{"", "4096"} {
		t.Run("limit "+limit, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"seq 1 100000; echo FINAL_LINE"}`))
			fm.Script(modeltest.Text("done"))
			extra := ""
			want := 65536
			if limit != "" {
				extra, want = "[tools]\noutput_limit_bytes = "+limit, 4096
			}
			in := newInstance(t, providerConfig(fm.URL(), extra))
			in.runOK(in.env, "", "exec", "--yes", "count")
			reqs := modelRequests(t, fm, 2)
			out, ok := callOutput(reqs[1], "c1")
			if !ok {
				t.Fatal("no function_call_output for c1")
			}
			if len(out) > want {
				t.Errorf("the model got %d bytes, over the limit %d", len(out), want)
			}
			var res struct {
				ExitCode  *int   `json:"exit_code"`
				Output    string `json:"output"`
				Truncated bool   `json:"truncated"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("the model got invalid JSON (%v): …%q", err, out[max(0, len(out)-200):])
			}
			if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.HasSuffix(res.Output, "100000\nFINAL_LINE\n") || !res.Truncated {
				t.Errorf("output lost its beginning or end (truncated %v): %.40q … %q", res.Truncated, res.Output, res.Output[max(0, len(res.Output)-40):])
			}
		})
	}
}
