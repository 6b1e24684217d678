package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Define builds a Tool from a typed parameter struct P. The schema is derived
// from P (json tags name the properties, fields without omitempty are
// required, `jsonschema:"…"` tags become descriptions, unknown properties are
// refused); adjust may then set maxima, enums and richer descriptions. plan
// receives the decoded, schema-valid parameters.
func Define[P any](name, description string, adjust func(s *jsonschema.Schema), plan func(env Env, p P) (Plan, error)) (Tool, error) {
	s, err := jsonschema.For[P](nil)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	if adjust != nil {
		adjust(s)
	}
	return newTyped(name, description, s, plan)
}

// MustDefine is Define for tool constructors whose parameter types are fixed at
// compile time; a failure is a programming error.
func MustDefine[P any](name, description string, adjust func(s *jsonschema.Schema), plan func(env Env, p P) (Plan, error)) Tool {
	t, err := Define(name, description, adjust, plan)
	if err != nil {
		panic(err)
	}
	return t
}

type typed[P any] struct {
	name, description string
	schema            json.RawMessage
	resolved          *jsonschema.Resolved
	plan              func(Env, P) (Plan, error)
}

func newTyped[P any](name, description string, s *jsonschema.Schema, plan func(Env, P) (Plan, error)) (*typed[P], error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	r, err := resolved(raw, s)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	return &typed[P]{name: name, description: description, schema: raw, resolved: r, plan: plan}, nil
}

// A schema resolved once for every tool value that has it. Each session
// builds its own tool set, and a resolved schema is most of a tool's
// memory (≈ 60 KiB per session for the built-in set), so sessions share
// it: a *jsonschema.Resolved is only read while validating. The key is
// the schema's JSON, so tools whose options change their schema (a
// configured maximum) get their own entry. maxResolved bounds the cache
// against schemas made at run time; past it a schema is resolved per
// tool as before.
const maxResolved = 256

var resolvedCache struct {
	sync.Mutex
	m map[string]*jsonschema.Resolved
}

func resolved(raw []byte, s *jsonschema.Schema) (*jsonschema.Resolved, error) {
	resolvedCache.Lock()
	r, ok := resolvedCache.m[string(raw)]
	resolvedCache.Unlock()
	if ok {
		return r, nil
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	resolvedCache.Lock()
	defer resolvedCache.Unlock()
	if prev, ok := resolvedCache.m[string(raw)]; ok {
		return prev, nil
	}
	if len(resolvedCache.m) < maxResolved {
		if resolvedCache.m == nil {
			resolvedCache.m = make(map[string]*jsonschema.Resolved)
		}
		resolvedCache.m[string(raw)] = r
	}
	return r, nil
}

func (t *typed[P]) Name() string            { return t.name }
func (t *typed[P]) Description() string     { return t.description }
func (t *typed[P]) Schema() json.RawMessage { return t.schema }

func (t *typed[P]) Plan(env Env, args json.RawMessage) (Plan, error) {
	if err := validate(t.resolved, args); err != nil {
		return Plan{}, err
	}
	var p P
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, Errorf(InvalidArguments, "invalid arguments for %s: %v", t.name, err)
	}
	return t.plan(env, p)
}
