package tui

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDisplayOutput(t *testing.T) {
	tests := []struct {
		name, in string
		text     string
		notes    []string
	}{
		{"plain text", "hello\nworld\n", "hello\nworld\n", nil},
		{"bash ok", `{"exit_code":0,"timed_out":false,"output":"hi\n","truncated":false}`, "hi\n", nil},
		{"bash failed", `{"exit_code":2,"timed_out":false,"output":"no such file\n","truncated":true}`, "no such file\n", []string{"exit 2", "output truncated"}},
		{"bash killed by timeout", `{"exit_code":null,"timed_out":true,"output":"","truncated":false}`, "", []string{"killed by a signal", "timed out"}},
		{"bash blocked by the sandbox", `{"exit_code":1,"timed_out":false,"output":"bash: /etc/x: Permission denied\n","truncated":false,"sandbox":"blocked by the sandbox: write outside the workspace (/etc/x)"}`,
			"bash: /etc/x: Permission denied\n", []string{"exit 1", "blocked by the sandbox: write outside the workspace (/etc/x)"}},
		{"read", `{"path":"go.mod","offset":0,"content":"module x\n","total_bytes":9,"truncated":true}`, "module x\n", []string{"more bytes follow in the file"}},
		{"write", `{"path":"a.txt","bytes":12,"sha256":"ab"}`, "wrote 12 bytes to a.txt", nil},
		{"other JSON", `{"b":[1,2],"a":"x"}`, "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"x\"\n}", nil},
		{"broken JSON", `{"a":`, `{"a":`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, notes := displayOutput(tc.in)
			if d := cmp.Diff([]any{tc.text, tc.notes}, []any{text, notes}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
