package tool

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// FromSchema builds a Tool whose input schema is data known only at run time
// (an MCP server's tool). The schema must be a JSON object describing an
// object; it is resolved once here, and every call's arguments are validated
// against it, exactly as for Define, before plan sees them. The schema the
// model is shown is the one given, without its "$schema" keyword (some model
// APIs refuse it).
func FromSchema(name, description string, schema json.RawMessage, plan func(env Env, args json.RawMessage) (Plan, error)) (Tool, error) {
	var shown map[string]json.RawMessage
	if err := json.Unmarshal(schema, &shown); err != nil || shown == nil {
		return nil, fmt.Errorf("schema of %s: not a JSON object", name)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	if !objectType(&s) {
		return nil, fmt.Errorf("schema of %s: the input must be described as an object, not %s", name, typeNames(&s))
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	delete(shown, "$schema")
	if _, ok := shown["type"]; !ok {
		shown["type"] = json.RawMessage(`"object"`)
	}
	raw, err := json.Marshal(shown)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	return &untyped{name: name, description: description, schema: raw, resolved: r, plan: plan}, nil
}

// objectType says the schema describes an object (or leaves the type open,
// which model APIs read as an object).
func objectType(s *jsonschema.Schema) bool {
	switch {
	case s.Type != "":
		return s.Type == "object"
	case len(s.Types) > 0:
		return len(s.Types) == 1 && s.Types[0] == "object"
	}
	return true
}

func typeNames(s *jsonschema.Schema) string {
	if s.Type != "" {
		return fmt.Sprintf("%q", s.Type)
	}
	return fmt.Sprintf("%q", s.Types)
}

type untyped struct {
	name, description string
	schema            json.RawMessage
	resolved          *jsonschema.Resolved
	plan              func(Env, json.RawMessage) (Plan, error)
}

func (t *untyped) Name() string            { return t.name }
func (t *untyped) Description() string     { return t.description }
func (t *untyped) Schema() json.RawMessage { return t.schema }

func (t *untyped) Plan(env Env, args json.RawMessage) (Plan, error) {
	if err := validate(t.resolved, args); err != nil {
		return Plan{}, err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return t.plan(env, args)
}
