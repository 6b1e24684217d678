package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// validate checks raw arguments against the resolved schema and turns the
// validator's messages into ones a model (and a person) can act on.
func validate(r *jsonschema.Resolved, args json.RawMessage) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	// One decode serves both the shape check and the validator: arguments
	// can be a megabyte (write's content), so every pass counts.
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		if strings.Contains(err.Error(), "after top-level value") {
			return Errorf(InvalidArguments, "invalid arguments: trailing data after the JSON object")
		}
		return Errorf(InvalidArguments, "invalid arguments: not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return Errorf(InvalidArguments, "invalid arguments: expected a JSON object, got %s", jsonKind(v))
	}
	if err := r.Validate(v); err != nil {
		return Errorf(InvalidArguments, "invalid arguments: %s", humanize(err.Error(), r.Schema()))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "a value"
}

// messageREs are the patterns of jsonschema-go's messages, compiled on the
// first failed validation: compiled when the program starts, they would
// cost every command.
type messageREs struct {
	prefix, maximum, minimum, required, addl, enum, typ, trailZero *regexp.Regexp
}

var messages struct {
	once sync.Once
	re   messageREs
}

func messagePatterns() *messageREs {
	messages.once.Do(func() {
		messages.re = messageREs{
			prefix:    regexp.MustCompile(`validating (root|/properties/([^:]+)): `),
			maximum:   regexp.MustCompile(`maximum: (\S+?)(?:/1)? is greater than ([0-9.]+)`),
			minimum:   regexp.MustCompile(`minimum: (\S+?)(?:/1)? is less than ([0-9.]+)`),
			required:  regexp.MustCompile(`required: missing properties: \[(.*)\]`),
			addl:      regexp.MustCompile(`unexpected additional properties \[(.*)\]`),
			enum:      regexp.MustCompile(`enum: (.*) does not equal any of: \[(.*)\]`),
			typ:       regexp.MustCompile(`type: (.*) has type "(\w+)", want (.*)`),
			trailZero: regexp.MustCompile(`\.0+$`),
		}
	})
	return &messages.re
}

// humanize rewrites jsonschema-go messages such as
// `validating /properties/limit: maximum: 11/1 is greater than 10.000000`
// into `limit: 11 is above the maximum 10`.
func humanize(msg string, schema *jsonschema.Schema) string {
	re := messagePatterns()
	rePrefix, reMaximum, reMinimum, reRequired := re.prefix, re.maximum, re.minimum, re.required
	reAddl, reEnum, reType, reTrailZero := re.addl, re.enum, re.typ, re.trailZero
	field := ""
	for _, m := range rePrefix.FindAllStringSubmatch(msg, -1) {
		if m[2] != "" {
			field = strings.ReplaceAll(m[2], "/properties/", ".")
		}
	}
	rest := rePrefix.ReplaceAllString(msg, "")
	prefix := ""
	if field != "" {
		prefix = "`" + field + "` "
	}
	switch {
	case reMaximum.MatchString(rest):
		m := reMaximum.FindStringSubmatch(rest)
		return fmt.Sprintf("%sis %s, above the maximum %s", prefix, m[1], reTrailZero.ReplaceAllString(m[2], ""))
	case reMinimum.MatchString(rest):
		m := reMinimum.FindStringSubmatch(rest)
		return fmt.Sprintf("%sis %s, below the minimum %s", prefix, m[1], reTrailZero.ReplaceAllString(m[2], ""))
	case reRequired.MatchString(rest):
		m := reRequired.FindStringSubmatch(rest)
		return fmt.Sprintf("missing required field %s", strings.ReplaceAll(m[1], `"`, "`"))
	case reAddl.MatchString(rest):
		m := reAddl.FindStringSubmatch(rest)
		return fmt.Sprintf("unknown field %s", strings.ReplaceAll(m[1], `"`, "`"))
	case reEnum.MatchString(rest):
		m := reEnum.FindStringSubmatch(rest)
		values := strings.Join(strings.Fields(m[2]), ", ")
		if list, ok := enumOf(schema, field); ok {
			values = list
		}
		return fmt.Sprintf("%sis %q, which is not one of: %s", prefix, m[1], values)
	case reType.MatchString(rest):
		m := reType.FindStringSubmatch(rest)
		return fmt.Sprintf("%shas type %s, want %s", prefix, m[2], wantTypes(m[3]))
	}
	return prefix + rest
}

// enumOf lists the allowed values of a top-level property from the schema
// itself (the validator's message cannot tell "New York" from two values),
// quoting those with spaces or commas.
func enumOf(s *jsonschema.Schema, field string) (string, bool) {
	if s == nil || field == "" || strings.Contains(field, ".") || s.Properties[field] == nil || len(s.Properties[field].Enum) == 0 {
		return "", false
	}
	var out []string
	for _, v := range s.Properties[field].Enum {
		t := fmt.Sprint(v)
		if strings.ContainsAny(t, " ,") || t == "" {
			t = strconv.Quote(t)
		}
		out = append(out, t)
	}
	return strings.Join(out, ", "), true
}

// wantTypes turns `"string"` or `one of "null, integer"` into "string" or
// "integer": null is only in the list because the field is optional.
func wantTypes(s string) string {
	s = strings.TrimPrefix(s, "one of ")
	var out []string
	for _, t := range strings.Split(strings.Trim(s, `"`), ",") {
		if t = strings.TrimSpace(strings.Trim(t, `"`)); t != "" && t != "null" {
			out = append(out, t)
		}
	}
	return strings.Join(out, " or ")
}
