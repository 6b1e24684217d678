package fs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// mixed has every class of character whose JSON encoding differs in size.
const mixed = "plain <html> & \"quotes\" \\ back\nnew\ttab\r\x01\x1f\x7f é€😀 \u2028\u2029 end"

func TestReadFitsOutputLimit(t *testing.T) {
	ws := t.TempDir()
	text := strings.Repeat(mixed, 20)
	testutil.Files(t, ws, map[string]string{"m.txt": text})
	rd := NewRead(Options{})
	for _, outLimit := range []int{120, 200, 1000, 65536} {
		t.Run("", func(t *testing.T) {
			var got strings.Builder
			offset, calls := int64(0), 0
			for {
				calls++
				if calls > len(text) {
					t.Fatal("paging does not advance")
				}
				p, err := rd.Plan(tool.Env{Workspace: ws, OutputLimit: outLimit}, json.RawMessage(testutil.JSON(map[string]any{"path": "m.txt", "offset": offset})))
				if err != nil {
					t.Fatal(err)
				}
				res := p.Run(t.Context())
				if !res.Success || len(res.Output) > outLimit {
					t.Fatalf("offset %d: %d bytes over limit %d: %+v", offset, len(res.Output), outLimit, res)
				}
				var r ReadResult
				if err := json.Unmarshal([]byte(res.Output), &r); err != nil {
					t.Fatalf("output is not JSON: %v", err)
				}
				got.WriteString(r.Content)
				offset += int64(len(r.Content))
				if r.Truncated != (offset < int64(len(text))) || res.Truncated != r.Truncated {
					t.Fatalf("truncated %v at %d of %d", r.Truncated, offset, len(text))
				}
				if !r.Truncated {
					break
				}
			}
			if d := cmp.Diff(text, got.String()); d != "" {
				t.Errorf("paged content differs (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadOutputDetails(t *testing.T) {
	ws := t.TempDir()
	testutil.Files(t, ws, map[string]string{"html.txt": "<a href=\"x\">&amp;</a>", "cut.txt": "0123456\u00e99"})
	small := NewRead(Options{MaxReadBytes: 8})
	tests := []struct {
		name    string
		tool    tool.Tool
		out     int
		args    string
		want    string // exact output on success
		kind    tool.ErrorKind
		message string
	}{
		{"no HTML escaping", NewRead(Options{}), 0, `{"path":"html.txt"}`,
			`{"path":"html.txt","offset":0,"content":"<a href=\"x\">&amp;</a>","total_bytes":21,"truncated":false}`, "", ""},
		{"default limit leaves a cut character for the next read", small, 0, `{"path":"cut.txt"}`,
			`{"path":"cut.txt","offset":0,"content":"0123456","total_bytes":10,"truncated":true}`, "", ""},
		{"capped limit leaves a cut character for the next read", small, 0, `{"path":"cut.txt","limit":100}`,
			`{"path":"cut.txt","offset":0,"content":"0123456","total_bytes":10,"truncated":true}`, "", ""},
		{"next read continues after it", small, 0, `{"path":"cut.txt","offset":7}`,
			`{"path":"cut.txt","offset":7,"content":"é9","total_bytes":10,"truncated":false}`, "", ""},
		{"an explicit limit cutting a character is an error", small, 0, `{"path":"cut.txt","limit":8}`,
			"", tool.Failed, "use limit 7"},
		{"limit 0 under an output limit", small, 100, `{"path":"cut.txt","limit":0}`,
			`{"path":"cut.txt","offset":0,"content":"","total_bytes":10,"truncated":true}`, "", ""},
		{"output limit too small for any content", small, 70, `{"path":"cut.txt"}`,
			"", tool.Limit, "output_limit_bytes (70)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.tool.Plan(tool.Env{Workspace: ws, OutputLimit: tc.out}, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			res := p.Run(t.Context())
			if tc.want != "" {
				if !res.Success {
					t.Fatalf("got %+v", res)
				}
				if d := cmp.Diff(tc.want, res.Output); d != "" {
					t.Errorf("output (-want +got):\n%s", d)
				}
				return
			}
			if res.Error != tc.kind || !strings.Contains(res.Output, tc.message) {
				t.Errorf("want %s %q, got %+v", tc.kind, tc.message, res)
			}
		})
	}
}

func TestFitJSONMatchesEncoder(t *testing.T) {
	for i := range len(mixed) + 1 {
		s := mixed[:i]
		enc, err := tool.EncodeJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := tool.FitJSON(s, len(enc)-2); got != s {
			t.Errorf("prefix %q: fitJSON with its exact budget cut it to %q", s, got)
		}
		if s != "" && tool.FitJSON(s, len(enc)-3) == s {
			t.Errorf("prefix %q fits a budget one byte short", s)
		}
	}
}
