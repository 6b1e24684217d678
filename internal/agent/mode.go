package agent

import (
	"fmt"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/tool"
)

// Plan mode and the todo list (docs/runtime.md): the mode decides which
// calls may run and what the system prompt asks for; the todo list is the
// latest one a todo_write call handed over.

// PlanPrompt is added to the system prompt while the session is in plan
// mode.
const PlanPrompt = `# Plan mode

The session is in plan mode: only read-only tools run, and every other call is refused. Do not try to change files or run commands. Study the task with the read-only tools, then answer with a plan in Markdown: the goal, the steps in order (the files and functions each one touches), the risks, and how to verify the result. The user reviews the plan; on accepting it they leave plan mode and ask you to carry it out.`

// ValidMode says m is a mode SetMode accepts.
func ValidMode(m string) bool { return m == proto.ModeDefault || m == proto.ModePlan }

// SetMode sets the mode of the session's next calls and model requests.
func (s *Session) SetMode(m string) error {
	if !ValidMode(m) {
		return fmt.Errorf("mode %q is not %s or %s", m, proto.ModeDefault, proto.ModePlan)
	}
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.mode = m
	return nil
}

// Mode returns the session's mode.
func (s *Session) Mode() string {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	if s.mode == "" {
		return proto.ModeDefault
	}
	return s.mode
}

// planning says the session is in plan mode.
func (s *Session) planning() bool { return s.Mode() == proto.ModePlan }

// instructions is the system prompt of the next model request.
func (s *Session) instructions() string {
	if s.planning() {
		return s.opts.SystemPrompt + "\n\n" + PlanPrompt
	}
	return s.opts.SystemPrompt
}

// fixedTokens are the tokens of the next request's system prompt and tool
// schemas: plan mode's section counts too.
func (s *Session) fixedTokens() int {
	if s.planning() {
		return s.fixed + estimateText(s.opts.Context, "\n\n"+PlanPrompt)
	}
	return s.fixed
}

// Todos returns the session's latest todo list (nil when it has none).
func (s *Session) Todos() []proto.TodoItem {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return append([]proto.TodoItem(nil), s.todos...)
}

// SetTodos sets the session's todo list (a resume's stored list, or nil
// when the session is cleared).
func (s *Session) SetTodos(items []proto.TodoItem) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.todos = append([]proto.TodoItem(nil), items...)
}

// todoSink is the Env.Todos of a call: it keeps the new list and sends
// todo.updated.
func (s *Session) todoSink(ev Emit) func([]tool.TodoItem) {
	return func(items []tool.TodoItem) {
		list := make([]proto.TodoItem, len(items))
		for i, it := range items {
			list[i] = proto.TodoItem{Content: it.Content, Status: it.Status}
		}
		s.SetTodos(list)
		ev(&proto.TodoUpdated{Items: list})
	}
}
