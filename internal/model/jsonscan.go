package model

import (
	"encoding/json"
	"errors"
)

// typeOf returns the string value of the top-level "type" key of the JSON
// object in data without decoding anything else (providers put "type"
// first or second, so this rarely looks past a few bytes). The result
// usually aliases data (switch on string(typ) does not allocate). ok is
// false when data is not an object or has no string "type".
func typeOf(data []byte) (typ []byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kEnd, kEsc := stringEnd(data, i)
		if kEnd < 0 {
			return nil, false
		}
		isType := !kEsc && string(data[i+1:kEnd-1]) == "type"
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		if isType {
			if i >= len(data) || data[i] != '"' {
				return nil, false
			}
			end, esc := stringEnd(data, i)
			if end < 0 {
				return nil, false
			}
			if !esc {
				return data[i+1 : end-1], true
			}
			var s string
			if json.Unmarshal(data[i:end], &s) != nil {
				return nil, false
			}
			return []byte(s), true
		}
		if i = skipValue(data, i); i < 0 {
			return nil, false
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ',' {
			return nil, false
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] == '"' and
// whether it holds escapes; -1 when it is not terminated.
func stringEnd(b []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc
		}
	}
	return -1, esc
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// It checks nesting and strings, not the grammar of numbers and literals.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end, _ := stringEnd(b, i)
			if end < 0 {
				return -1
			}
			i = end
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i < len(b) && (b[i] == ',' || b[i] == '}' || b[i] == ']' || b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			return i
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

// decode unmarshals data into v, ignoring fields whose JSON shape does not
// fit v (they stay zero): a provider adding an object where a string used
// to be must not cost the rest of the event. Invalid JSON is an error.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// jsonText is JSON text carried in a string field (tool arguments). Some
// servers send the object itself instead of its text; it is kept as text.
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
	case string(b) == "null":
		*t = ""
	default:
		*t = jsonText(b)
	}
	return nil
}
