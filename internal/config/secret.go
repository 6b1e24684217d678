package config

import (
	"fmt"
	"log/slog"
	"strconv"
)

// Redacted is what a set Secret prints as.
const Redacted = "<redacted>"

// Secret holds a credential. Every way of printing, logging or marshalling it
// shows "<redacted>" (or "" when it is empty); only Reveal returns the value.
type Secret string

// Reveal returns the secret itself, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString redacts %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// Format redacts every verb, including %x and %q.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' || (verb == 'v' && f.Flag('#')) {
		fmt.Fprint(f, strconv.Quote(s.String()))
		return
	}
	fmt.Fprint(f, s.String())
}

// MarshalJSON redacts.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// MarshalText redacts (TOML, YAML and map keys).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue redacts in slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
