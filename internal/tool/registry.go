package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Registry holds the tools of one session, in registration order.
type Registry struct {
	tools []Tool
	index map[string]Tool
}

// NewRegistry registers tools in order and rejects duplicate or empty names.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{index: map[string]Tool{}}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds one tool; a duplicate name is an error.
func (r *Registry) Register(t Tool) error {
	name := t.Name()
	if name == "" {
		return errors.New("register tool: empty name")
	}
	if _, dup := r.index[name]; dup {
		return fmt.Errorf("register tool %q: duplicate name", name)
	}
	if r.index == nil {
		r.index = map[string]Tool{}
	}
	r.index[name] = t
	r.tools = append(r.tools, t)
	return nil
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.index[name]
	return t, ok
}

// Tools returns the registered tools in registration order.
func (r *Registry) Tools() []Tool {
	if r == nil {
		return nil
	}
	return append([]Tool(nil), r.tools...)
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	names := make([]string, 0, len(r.tools))
	for _, t := range r.tools {
		names = append(names, t.Name())
	}
	sort.Strings(names)
	return names
}

// Prepare looks the tool up, validates args against its schema and asks it
// for a Plan. On failure it returns the failed Result the model should see
// (unknown_tool, invalid_arguments, …) and ok=false; nothing has run and no
// approval is needed. Every plain-text result, of the plan and of its Run,
// is fitted to env.OutputLimit (FitText).
func (r *Registry) Prepare(env Env, name string, args json.RawMessage) (Plan, Result, bool) {
	t, found := r.Get(name)
	if !found {
		return Plan{}, fitted(Fail(UnknownTool, "unknown tool %q; available tools: %v", name, r.Names()), env.OutputLimit), false
	}
	p, err := t.Plan(env, args)
	if err != nil {
		var te *Error
		if errors.As(err, &te) {
			return Plan{}, fitted(Result{Error: te.Kind, Output: te.Message}, env.OutputLimit), false
		}
		return Plan{}, fitted(Fail(Failed, "%s: %v", name, err), env.OutputLimit), false
	}
	if p.Run == nil {
		return Plan{}, Fail(Failed, "%s: no executor", name), false
	}
	// Plain-text results (messages that quote a path or URL the model
	// chose, pages, replies) are fitted here, so no tool has to repeat it.
	run, limit := p.Run, env.OutputLimit
	p.Run = func(ctx context.Context) Result { return fitted(run(ctx), limit) }
	return p, Result{}, true
}
