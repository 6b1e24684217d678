// Package todo holds the todo_write tool: the model replaces the session's
// todo list (the steps of its current task and their status), and the
// session's Env.Todos sink hands the list to the server, which keeps the
// latest list of the session and sends it to the clients. The call writes
// nothing in the workspace, so its risk is read_only: it runs without an
// approval and in plan mode.
package todo

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/tool"
)

//go:embed todo_write.md
var description string

// Bounds of a list: items, and bytes of one item's content.
const (
	MaxItems     = 50
	MaxItemBytes = 500
)

// Statuses an item may have.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Guidance is the system prompt's line about the tool (added when the
// session offers it).
const Guidance = "# Todo list\n\nFor multi-step work (three or more distinct steps, or a task given as a list), keep a todo list with todo_write: write it before you start, keep exactly one item in_progress while you work, and mark items completed as you finish them. Skip it for a single quick step or a plain question."

// Item is one entry of the list.
type Item struct {
	Content string `json:"content" jsonschema:"what the step is, one line"`
	Status  string `json:"status" jsonschema:"pending, in_progress or completed"`
}

// Params is the input of todo_write.
type Params struct {
	Todos []Item `json:"todos" jsonschema:"the whole new list, in order; [] clears it"`
}

// New returns the todo_write tool.
func New() tool.Tool {
	desc := strings.NewReplacer("{{MAX_ITEMS}}", strconv.Itoa(MaxItems), "{{MAX_BYTES}}", strconv.Itoa(MaxItemBytes)).Replace(description)
	t := tool.MustDefine("todo_write", desc, adjust, func(env tool.Env, p Params) (tool.Plan, error) {
		items, err := check(p.Todos)
		if err != nil {
			return tool.Plan{}, err
		}
		return tool.Plan{
			Risk:    tool.ReadOnly,
			Summary: summary(items),
			Run: func(ctx context.Context) tool.Result {
				if ctx.Err() != nil {
					return tool.Fail(tool.Cancelled, "todo_write: cancelled; the list was not changed")
				}
				if env.Todos != nil {
					env.Todos(items)
				}
				return tool.Result{Success: true, Output: "todo list updated: " + summary(items)}
			},
		}, nil
	})
	return tool.WithRiskClass(t, "read_only")
}

// adjust makes the status an enum in the schema the model is given.
func adjust(s *jsonschema.Schema) {
	it := s.Properties["todos"].Items
	it.Properties["status"].Enum = []any{Pending, InProgress, Completed}
}

// check applies the bounds the schema does not state in bytes; each error
// names the item and the bound.
func check(in []Item) ([]tool.TodoItem, error) {
	if len(in) > MaxItems {
		return nil, tool.Errorf(tool.InvalidArguments, "todo_write: todos has %d items, over the limit of %d; merge or drop items and send the whole list again", len(in), MaxItems)
	}
	out := make([]tool.TodoItem, len(in))
	for i, it := range in {
		c := strings.TrimSpace(it.Content)
		switch {
		case c == "":
			return nil, tool.Errorf(tool.InvalidArguments, "todo_write: todos[%d].content is empty; say what the step is", i)
		case len(c) > MaxItemBytes:
			return nil, tool.Errorf(tool.InvalidArguments, "todo_write: todos[%d].content is %d bytes, over the limit of %d; shorten it", i, len(c), MaxItemBytes)
		case strings.ContainsAny(c, "\r\n"):
			return nil, tool.Errorf(tool.InvalidArguments, "todo_write: todos[%d].content has a line break; keep each item to one line", i)
		}
		switch it.Status {
		case Pending, InProgress, Completed:
		default:
			return nil, tool.Errorf(tool.InvalidArguments, "todo_write: todos[%d].status %q is not pending, in_progress or completed", i, it.Status)
		}
		out[i] = tool.TodoItem{Content: c, Status: it.Status}
	}
	return out, nil
}

// summary counts the list by status: "4 items (1 completed, 1 in progress,
// 2 pending)", or "the list is empty".
func summary(items []tool.TodoItem) string {
	if len(items) == 0 {
		return "the list is empty"
	}
	n := map[string]int{}
	for _, it := range items {
		n[it.Status]++
	}
	word := "items"
	if len(items) == 1 {
		word = "item"
	}
	return fmt.Sprintf("%d %s (%d completed, %d in progress, %d pending)", len(items), word, n[Completed], n[InProgress], n[Pending])
}
