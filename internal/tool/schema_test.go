package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestFromSchema(t *testing.T) {
	var got json.RawMessage
	tl, err := FromSchema("x", "an external tool", json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"properties":{"n":{"type":"integer","maximum":5},"s":{"type":"string","enum":["a","b"]},"city":{"enum":["New York","Paris"]}},"required":["n"],"additionalProperties":false}`),
		func(env Env, args json.RawMessage) (Plan, error) {
			got = args
			return Plan{Risk: Process, Summary: "x", Run: func(context.Context) Result { return Result{Success: true} }}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tl.Schema()), "$schema") {
		t.Errorf("model-facing schema keeps $schema: %s", tl.Schema())
	}
	r, err := NewRegistry(tl)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{}`:                    "missing required field `n`",
		`{"n":6}`:               "`n` is 6, above the maximum 5",
		`{"n":1,"s":"c"}`:       "`s` is \"c\", which is not one of: a, b",
		`{"n":1,"z":true}`:      "unknown field `z`",
		`{"n":1,"city":"Rome"}`: "`city` is \"Rome\", which is not one of: \"New York\", Paris",
		`{"n":"1"}`:             "`n` has type string, want integer",
		`[]`:                    "expected a JSON object",
	} {
		got = nil
		if _, res, ok := r.Prepare(Env{}, "x", json.RawMessage(args)); ok || res.Error != InvalidArguments || !strings.Contains(res.Output, want) {
			t.Errorf("%s: ok=%v %+v, want invalid_arguments with %q", args, ok, res, want)
		}
		if got != nil {
			t.Errorf("%s: plan ran on invalid input", args)
		}
	}
	if _, _, ok := r.Prepare(Env{}, "x", json.RawMessage(`{"n":2,"s":"a"}`)); !ok || string(got) != `{"n":2,"s":"a"}` {
		t.Errorf("valid call: ok=%v args=%s", ok, got)
	}
}

func TestFromSchemaEmptyArgumentsAndOpenType(t *testing.T) {
	var got json.RawMessage
	tl, err := FromSchema("y", "", json.RawMessage(`{"properties":{}}`), func(env Env, args json.RawMessage) (Plan, error) {
		got = args
		return Plan{Run: func(context.Context) Result { return Result{} }}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]any
	if err := json.Unmarshal(tl.Schema(), &shown); err != nil || shown["type"] != "object" {
		t.Errorf("schema without a type is shown as %s, want type object", tl.Schema())
	}
	if _, err := tl.Plan(Env{}, nil); err != nil || string(got) != "{}" {
		t.Errorf("empty arguments: %v, args %s", err, got)
	}
}

func TestFromSchemaRefusesUnusable(t *testing.T) {
	plan := func(Env, json.RawMessage) (Plan, error) { return Plan{}, nil }
	for schema, want := range map[string]string{
		`"object"`:                   "not a JSON object",
		`null`:                       "not a JSON object",
		`{"type":"string"}`:          `not "string"`,
		`{"type":["object","null"]}`: "must be described as an object",
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`: "missing",
		`{"type":"object","required":"a"}`:                                "schema of z",
	} {
		if _, err := FromSchema("z", "", json.RawMessage(schema), plan); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", schema, err, want)
		}
	}
}

// TestDefineSharesResolvedSchemas: tools defined again with the same
// schema (every session builds its own set) share one resolved schema;
// a schema an option changed gets its own, and each still validates by
// its own rules.
func TestDefineSharesResolvedSchemas(t *testing.T) {
	type params struct {
		N int `json:"n"`
	}
	plan := func(Env, params) (Plan, error) {
		return Plan{Risk: ReadOnly, Summary: "n", Run: func(context.Context) Result { return Result{Success: true} }}, nil
	}
	withMax := func(m float64) func(s *jsonschema.Schema) {
		return func(s *jsonschema.Schema) { s.Properties["n"].Maximum = &m }
	}
	a := MustDefine("shared_schema_test", "d", withMax(5), plan).(*typed[params])
	b := MustDefine("shared_schema_test", "d", withMax(5), plan).(*typed[params])
	c := MustDefine("shared_schema_test", "d", withMax(50), plan).(*typed[params])
	if a.resolved != b.resolved {
		t.Error("two tools with one schema resolved it twice")
	}
	if a.resolved == c.resolved {
		t.Error("tools with different maxima share a resolved schema")
	}
	if _, err := b.Plan(Env{}, json.RawMessage(`{"n":7}`)); err == nil || !strings.Contains(err.Error(), "maximum") {
		t.Errorf("n = 7 against maximum 5: %v, want a maximum error", err)
	}
	if _, err := c.Plan(Env{}, json.RawMessage(`{"n":7}`)); err != nil {
		t.Errorf("n = 7 against maximum 50: %v", err)
	}
}
