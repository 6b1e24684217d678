package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type params struct {
	Path    string `json:"path" jsonschema:"a workspace-relative path"`
	Limit   *int   `json:"limit,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Verbose bool   `json:"verbose,omitempty"`
}

func testTool(t *testing.T, planned *int) Tool {
	t.Helper()
	tl, err := Define("t", "a test tool", func(s *jsonschema.Schema) {
		s.Properties["limit"].Maximum = jsonschema.Ptr(100.0)
		s.Properties["limit"].Minimum = jsonschema.Ptr(0.0)
		s.Properties["mode"].Enum = []any{"create", "replace"}
	}, func(env Env, p params) (Plan, error) {
		*planned++
		if strings.HasPrefix(p.Path, "/") {
			return Plan{}, Errorf(InvalidArguments, "path %q must be relative", p.Path)
		}
		risk := ReadOnly
		if p.Mode != "" {
			risk = Filesystem
		}
		return Plan{Risk: risk, Summary: "t " + p.Path, Run: func(context.Context) Result {
			return JSONResult(true, "", map[string]any{"path": p.Path}, false)
		}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestValidationBeforePlan(t *testing.T) {
	tests := []struct {
		args, want string
	}{
		{`{}`, "missing required field `path`"},
		{`{"path":1}`, "`path` has type integer, want string"},
		{`{"path":"a","extra":true}`, "unknown field `extra`"},
		{`{"path":"a","limit":101}`, "`limit` is 101, above the maximum 100"},
		{`{"path":"a","limit":-1}`, "`limit` is -1, below the minimum 0"},
		{`{"path":"a","limit":1.5}`, "`limit` has type number, want integer"},
		{`{"path":"a","mode":"append"}`, "`mode` is \"append\", which is not one of: create, replace"},
		{`[1]`, "expected a JSON object, got an array"},
		{`{"path":`, "not valid JSON"},
		{`{"path":"a"} {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			planned := 0
			r, err := NewRegistry(testTool(t, &planned))
			if err != nil {
				t.Fatal(err)
			}
			_, res, ok := r.Prepare(Env{}, "t", json.RawMessage(tt.args))
			if ok {
				t.Fatal("invalid arguments accepted")
			}
			if res.Error != InvalidArguments || !strings.Contains(res.Output, tt.want) {
				t.Fatalf("got %s %q, want invalid_arguments containing %q", res.Error, res.Output, tt.want)
			}
			if planned != 0 {
				t.Fatal("Plan ran on invalid input")
			}
		})
	}
}

func TestPrepareAndRun(t *testing.T) {
	planned := 0
	r, err := NewRegistry(testTool(t, &planned))
	if err != nil {
		t.Fatal(err)
	}
	p, _, ok := r.Prepare(Env{}, "t", json.RawMessage(`{"path":"a","mode":"create"}`))
	if !ok || p.Risk != Filesystem || p.Summary != "t a" {
		t.Fatalf("plan = %+v ok=%v", p, ok)
	}
	res := p.Run(t.Context())
	if !res.Success || !res.JSON || res.Output != `{"path":"a"}` {
		t.Fatalf("result = %+v", res)
	}
	// Empty arguments count as {} (models send "" for no arguments).
	if _, res, ok := r.Prepare(Env{}, "t", nil); ok || !strings.Contains(res.Output, "missing required field") {
		t.Fatalf("empty args: %+v", res)
	}
	// A tool's own semantic check is a failed result of its kind.
	if _, res, ok := r.Prepare(Env{}, "t", json.RawMessage(`{"path":"/abs"}`)); ok || res.Error != InvalidArguments || !strings.Contains(res.Output, "must be relative") {
		t.Fatalf("semantic check: %+v", res)
	}
	if _, res, ok := r.Prepare(Env{}, "nope", json.RawMessage(`{}`)); ok || res.Error != UnknownTool || !strings.Contains(res.Output, `"nope"`) {
		t.Fatalf("unknown tool: %+v", res)
	}
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	planned := 0
	a, b := testTool(t, &planned), testTool(t, &planned)
	if _, err := NewRegistry(a, b); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("err = %v", err)
	}
	r, err := NewRegistry(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(WithRiskClass(b, "x")); err == nil {
		t.Fatal("duplicate accepted through a wrapper")
	}
	if got := r.Names(); len(got) != 1 || got[0] != "t" {
		t.Fatalf("names = %v", got)
	}
}

func TestSchemaDerived(t *testing.T) {
	planned := 0
	var s map[string]any
	if err := json.Unmarshal(testTool(t, &planned).Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["additionalProperties"] != false {
		t.Fatalf("unknown properties allowed: %v", s)
	}
	props := s["properties"].(map[string]any)
	if props["limit"].(map[string]any)["maximum"] != 100.0 {
		t.Fatalf("maximum not advertised: %v", props["limit"])
	}
	if props["path"].(map[string]any)["description"] != "a workspace-relative path" {
		t.Fatalf("description lost: %v", props["path"])
	}
	if req := s["required"].([]any); len(req) != 1 || req[0] != "path" {
		t.Fatalf("required = %v", req)
	}
}

func TestRiskClass(t *testing.T) {
	planned := 0
	tl := testTool(t, &planned)
	if RiskClassOf(tl) != "per call" || RiskClassOf(WithRiskClass(tl, "read_only")) != "read_only" {
		t.Fatal("risk class")
	}
}

func TestTextHelpers(t *testing.T) {
	if got := TruncateUTF8("héllo", 2); got != "h" {
		t.Errorf("TruncateUTF8 = %q", got)
	}
	s, err := EncodeJSON(map[string]string{"a": "<&>"})
	if err != nil || s != `{"a":"<&>"}` {
		t.Errorf("EncodeJSON = %q, %v", s, err)
	}
	for _, in := range []string{"a\"b\\c\nd", "héllo wörld", "\x01\x02abc", "plain"} {
		for budget := 0; budget < 30; budget++ {
			got := FitJSON(in, budget)
			enc, _ := json.Marshal(got)
			if len(enc)-2 > budget || !strings.HasPrefix(in, got) {
				t.Fatalf("FitJSON(%q, %d) = %q (%d bytes encoded)", in, budget, got, len(enc)-2)
			}
		}
	}
}
