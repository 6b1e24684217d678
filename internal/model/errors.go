package model

import (
	"strings"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/textcut"
)

// maxMessage bounds Error.Message: one line of at most 300 bytes.
const maxMessage = 300

const redacted = "[redacted]"

// Unwrap exposes the cause (e.g. context.Canceled) to errors.Is.
func (e *Error) Unwrap() error { return e.cause }

func secretsOf(opts Options) []string {
	var s []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= 4 {
			s = append(s, v)
		}
	}
	add(opts.APIKey)
	for _, v := range opts.Headers {
		add(v)
		// "Bearer xyz" style values: the token alone is secret too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(tok)
		}
	}
	return s
}

// newError builds a one-line, bounded, redacted *Error; never empty.
func (c *core) newError(code, msg string, cause error) *Error {
	return &Error{Code: code, Message: cleanMessage(msg, c.secrets), cause: cause}
}

func cleanMessage(msg string, secrets []string) string {
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "?")
	}
	if msg == "" {
		msg = "model request failed with no message from the provider"
	}
	if len(msg) > maxMessage {
		msg = textcut.Prefix(msg, maxMessage-len("…")) + "…"
	}
	return msg
}
