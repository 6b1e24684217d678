package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tool"
)

// run prepares and runs one todo_write call through a registry (schema
// validation first, as every call) and returns the result and the list the
// sink received (nil when it was not called).
func run(t *testing.T, args string) (tool.Result, []tool.TodoItem, bool) {
	t.Helper()
	r, err := tool.NewRegistry(New())
	if err != nil {
		t.Fatal(err)
	}
	var got []tool.TodoItem
	called := false
	env := tool.Env{Workspace: t.TempDir(), OutputLimit: 1 << 16, Todos: func(items []tool.TodoItem) { got, called = items, true }}
	plan, res, ok := r.Prepare(env, "todo_write", json.RawMessage(args))
	if !ok {
		return res, nil, false
	}
	if plan.Risk != tool.ReadOnly {
		t.Errorf("risk = %s, want read_only", plan.Risk)
	}
	res = plan.Run(t.Context())
	if !called {
		got = nil
	}
	return res, got, called
}

func TestTodoWrite(t *testing.T) {
	res, got, called := run(t, `{"todos":[{"content":"read the parser","status":"completed"},{"content":" fix the bug ","status":"in_progress"},{"content":"add a test","status":"pending"}]}`)
	if !called || !res.Success {
		t.Fatalf("result %+v, sink called %v", res, called)
	}
	want := []tool.TodoItem{{Content: "read the parser", Status: Completed}, {Content: "fix the bug", Status: InProgress}, {Content: "add a test", Status: Pending}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
	if res.Output != "todo list updated: 3 items (1 completed, 1 in progress, 1 pending)" {
		t.Errorf("output = %q", res.Output)
	}
	res, got, called = run(t, `{"todos":[]}`)
	if !called || !res.Success || len(got) != 0 || !strings.Contains(res.Output, "empty") {
		t.Errorf("clearing: %+v, %v, %v", res, got, called)
	}
}

func TestTodoWriteRefusesBadLists(t *testing.T) {
	items := func(n int, content string) string {
		var b []string
		for range n {
			b = append(b, fmt.Sprintf(`{"content":%q,"status":"pending"}`, content))
		}
		return `{"todos":[` + strings.Join(b, ",") + `]}`
	}
	tests := []struct{ name, args, want string }{
		{"too many items", items(MaxItems+1, "x"), "todos has 51 items, over the limit of 50"},
		{"item too long", `{"todos":[{"content":"ok","status":"pending"},{"content":"` + strings.Repeat("é", 251) + `","status":"pending"}]}`, "todos[1].content is 502 bytes, over the limit of 500"},
		{"empty content", `{"todos":[{"content":"  ","status":"pending"}]}`, "todos[0].content is empty"},
		{"line break", `{"todos":[{"content":"a\nb","status":"pending"}]}`, "todos[0].content has a line break"},
		{"unknown status", `{"todos":[{"content":"a","status":"done"}]}`, "status"},
		{"missing todos", `{}`, "todos"},
		{"unknown field", `{"todos":[],"x":1}`, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _, called := run(t, tc.args)
			if called || res.Success || res.Error != tool.InvalidArguments || !strings.Contains(res.Output, tc.want) {
				t.Errorf("result %+v (sink called %v), want invalid_arguments containing %q", res, called, tc.want)
			}
		})
	}
	// The exact bound is accepted.
	if res, got, _ := run(t, items(MaxItems, strings.Repeat("a", MaxItemBytes))); !res.Success || len(got) != MaxItems {
		t.Errorf("a list at the bounds: %+v, %d items", res, len(got))
	}
}

func TestGuidanceIsBounded(t *testing.T) {
	if len(Guidance) > 512 || !strings.Contains(Guidance, "todo_write") {
		t.Errorf("Guidance is %d bytes: %q", len(Guidance), Guidance)
	}
}
