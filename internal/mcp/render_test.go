package mcp

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/tool"
)

var modelName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"files", "read_file", "mcp__files__read_file"},
		{"everything", "get-sum", "mcp__everything__get-sum"},
		{"s", "a.b/c d", "mcp__s__a_b_c_d"},
		{"s", "héllo", "mcp__s__h_llo"},
		{"s", "日本", "mcp__s____"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	long1, long2 := ToolName("server", strings.Repeat("x", 100)+"1"), ToolName("server", strings.Repeat("x", 100)+"2")
	for _, n := range []string{long1, long2} {
		if !modelName.MatchString(n) {
			t.Errorf("%q is not a name model APIs accept", n)
		}
	}
	if long1 == long2 {
		t.Errorf("two long names collapse into %q", long1)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		in   *sdk.CallToolResult
		want tool.Result
	}{
		{"texts joined", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
			tool.Result{Success: true, Output: "a\nb"}},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"x": "<&>"}},
			tool.Result{Success: true, Output: `{"x":"<&>"}`, JSON: true}},
		{"structured repeated as text", &sdk.CallToolResult{StructuredContent: map[string]any{"x": 1, "y": 2},
			Content: []sdk.Content{&sdk.TextContent{Text: "{\n  \"y\": 2, \"x\": 1\n}"}}},
			tool.Result{Success: true, Output: `{"x":1,"y":2}`, JSON: true}},
		{"structured beside other text", &sdk.CallToolResult{StructuredContent: []any{1}, Content: []sdk.Content{&sdk.TextContent{Text: "see"}}},
			tool.Result{Success: true, Output: "see\n[structured content] [1]"}},
		{"error", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "bad"}}},
			tool.Result{Error: tool.Failed, Output: "bad"}},
		{"error without text", &sdk.CallToolResult{IsError: true},
			tool.Result{Error: tool.Failed, Output: "the MCP tool reported an error without a message"}},
		{"binary resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x:1", Blob: make([]byte, 7)}}}},
			tool.Result{Success: true, Output: "[resource: x:1, unknown type, binary, 7 bytes]"}},
		{"nil", nil, tool.Result{Error: tool.Failed, Output: "the MCP server returned no result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, render(tt.in, 1000)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderBound: whatever the content, the output fits the limit and says
// what was cut.
func TestRenderBound(t *testing.T) {
	big := strings.Repeat("é\"\n", 10000)
	for _, limit := range []int{1, 10, 50, 100, 4096} {
		for _, in := range []*sdk.CallToolResult{
			{Content: []sdk.Content{&sdk.TextContent{Text: big}}},
			{StructuredContent: map[string]any{"body": big}},
		} {
			res := render(in, limit)
			if len(res.Output) > limit || !res.Truncated || res.JSON {
				t.Errorf("limit %d: %d bytes, truncated %v, json %v", limit, len(res.Output), res.Truncated, res.JSON)
			}
			if limit >= 100 && !strings.Contains(res.Output, " bytes shown]") {
				t.Errorf("limit %d: no marker in %q", limit, res.Output)
			}
		}
	}
}
