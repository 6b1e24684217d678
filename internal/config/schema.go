package config

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The schema is Config itself: key names are its TOML tags. These helpers
// walk it by key path so that layering, provenance and explanation need no
// second description of the keys.

var (
	configType   = reflect.TypeFor[Config]()
	providerType = reflect.TypeFor[Provider]()
	agentType    = reflect.TypeFor[AgentOverride]()
	headersType  = reflect.TypeFor[map[string]Secret]()
	secretType   = reflect.TypeFor[Secret]()
)

// isBareKey says a TOML key part needs no quotes: [A-Za-z0-9_-]+.
func isBareKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return s != ""
}

func isAlnum(c byte) bool { return isLower(c) || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// joinKey renders a key path the way TOML spells it, quoting parts that are
// not bare keys.
func joinKey(parts []string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		if isBareKey(p) {
			q[i] = p
		} else {
			q[i] = strconv.Quote(p)
		}
	}
	return strings.Join(q, ".")
}

func tagOf(f reflect.StructField) string { n, _, _ := strings.Cut(f.Tag.Get("toml"), ","); return n }

func fieldIndex(t reflect.Type, name string) (int, bool) {
	for i := range t.NumField() {
		if tagOf(t.Field(i)) == name {
			return i, true
		}
	}
	return 0, false
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		names = append(names, tagOf(t.Field(i)))
	}
	return names
}

// isNamed reports whether t is a map of named tables ([providers.<name>]).
func isNamed(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct
}

// isTableArray reports whether t is an array of tables ([[hooks.run]]).
func isTableArray(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
}

func isContainer(t reflect.Type) bool { return t.Kind() == reflect.Struct || isNamed(t) }

// resolved is a key path of a file mapped onto the schema.
type resolved struct {
	path    []string // leaf (or container) path, e.g. providers, openai, headers
	pattern string   // e.g. providers.*.headers
	leaf    bool
	typ     reflect.Type
}

// resolve maps a key path onto the schema. Keys below a headers table map
// to the headers leaf. A non-empty message means the key is unknown.
func resolve(parts []string) (resolved, string) {
	t := configType
	var pat []string
	for i, comp := range parts {
		switch {
		case t.Kind() == reflect.Struct:
			idx, ok := fieldIndex(t, comp)
			if !ok {
				return resolved{}, unknownKeyMsg(parts[:i+1], fieldNames(t))
			}
			t = t.Field(idx).Type
			pat = append(pat, comp)
		case isNamed(t):
			if t.Elem() == agentType && !slices.Contains(KnownAgents, comp) {
				return resolved{}, "unknown agent " + strconv.Quote(comp) + "; known agents: " + strings.Join(KnownAgents, ", ")
			}
			t = t.Elem()
			pat = append(pat, "*")
		case t == headersType || isTableArray(t):
			// A header name, or a key of one table of an array of tables
			// ([[hooks.run]]): the whole array is one leaf; nesting deeper
			// and unknown keys are errors the decoder reports.
			return resolved{path: parts[:i], pattern: strings.Join(pat, "."), leaf: true, typ: t}, ""
		default:
			return resolved{}, "key " + joinKey(parts[:i]) + " is a value, not a table"
		}
	}
	return resolved{path: parts, pattern: strings.Join(pat, "."), leaf: !isContainer(t), typ: t}, ""
}

func unknownKeyMsg(parts []string, known []string) string {
	msg := "unknown key " + strconv.Quote(joinKey(parts))
	last := parts[len(parts)-1]
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(last, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		msg += "; did you mean " + strconv.Quote(joinKey(append(slices.Clone(parts[:len(parts)-1]), best))) + "?"
	}
	return msg
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// get reads the value at a path; invalid when a named table is missing.
func get(v reflect.Value, parts []string) reflect.Value {
	for _, comp := range parts {
		switch {
		case v.Kind() == reflect.Struct:
			idx, ok := fieldIndex(v.Type(), comp)
			if !ok {
				return reflect.Value{}
			}
			v = v.Field(idx)
		case isNamed(v.Type()):
			v = v.MapIndex(reflect.ValueOf(comp))
			if !v.IsValid() {
				return v
			}
		default:
			return reflect.Value{}
		}
	}
	return v
}

// newElem is the value a named table starts from: a new provider profile
// starts from the profile defaults, an agent table from "default"
// permissions.
func newElem(t reflect.Type) reflect.Value {
	e := reflect.New(t).Elem()
	switch t {
	case providerType:
		e.Set(reflect.ValueOf(defaultProvider()))
	case agentType:
		e.Set(reflect.ValueOf(defaultAgent()))
	case mcpServerType:
		e.Set(reflect.ValueOf(defaultMCPServer()))
	}
	return e
}

// set writes val at a path of the addressable v, creating named tables from
// their defaults. A nil val only makes sure the path's tables exist.
func set(v reflect.Value, parts []string, val reflect.Value) {
	if len(parts) == 0 {
		if val.IsValid() {
			v.Set(val)
		}
		return
	}
	switch {
	case v.Kind() == reflect.Struct:
		idx, _ := fieldIndex(v.Type(), parts[0])
		set(v.Field(idx), parts[1:], val)
	case isNamed(v.Type()):
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		k := reflect.ValueOf(parts[0])
		e := newElem(v.Type().Elem())
		if cur := v.MapIndex(k); cur.IsValid() {
			e.Set(cur)
		}
		set(e, parts[1:], val)
		v.SetMapIndex(k, e)
	}
}

// walkLeaves calls fn for every leaf of v in declaration order, named
// tables sorted by name.
func walkLeaves(v reflect.Value, path, pat []string, fn func(path []string, pattern string, v reflect.Value)) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			n := tagOf(t.Field(i))
			walkLeaves(v.Field(i), append(slices.Clone(path), n), append(slices.Clone(pat), n), fn)
		}
	case isNamed(t):
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			walkLeaves(v.MapIndex(k), append(slices.Clone(path), k.String()), append(slices.Clone(pat), "*"), fn)
		}
	default:
		fn(path, strings.Join(pat, "."), v)
	}
}
