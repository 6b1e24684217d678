package approval

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The prefix rule of command grants (docs/runtime.md §7.1):
//
// A grant for the prefix P (one or more words) covers a command C when
//
//  1. C is simple: it holds none of the characters with which a shell
//     chains, substitutes, redirects or groups commands — ; & | < > ( ) $
//     ` \ { } ! — no newline and no other control character; and
//  2. the first words of C, split at spaces and tabs, are exactly the
//     words of P.
//
// So a grant for `go test` covers `go test ./...` and `go  test -run X`,
// but not `go testx` (another word), `go test; rm -rf ~` or
// `go test && rm -rf ~` (chained), `go test $(rm -rf ~)` (a substitution)
// or `go test > file` (a redirection): those are asked again. Quoting
// is not interpreted: a command that spells the prefix differently
// ("go" test) simply does not match. What the grant cannot limit is what
// the prefix itself does with any arguments (go test -exec runs a
// program of the caller's choice): confirm only prefixes that are safe
// with any arguments.

// shellMeta are the characters that make a command not simple.
const shellMeta = ";&|<>()$`\\{}!"

// MaxPrefixBytes bounds a grant's prefix.
const MaxPrefixBytes = 256

// Simple reports whether cmd may be matched by a prefix grant at all.
func Simple(cmd string) bool {
	if !utf8.ValidString(cmd) {
		return false
	}
	for _, r := range cmd {
		if r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || strings.ContainsRune(shellMeta, r) {
			return false
		}
	}
	return true
}

// words splits a command at spaces and tabs, the separators of a shell's
// words outside quotes.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// MatchPrefix reports whether the grant prefix covers cmd. A prefix
// that starts with a command runner without a fixed script never covers
// anything (CheckPrefix refuses it; this holds for saved rules too), nor
// does any prefix cover a `find` that runs or deletes (findAction).
func MatchPrefix(prefix, cmd string) bool {
	p := words(prefix)
	if len(p) == 0 || !Simple(cmd) || runnerWhy(p) != "" {
		return false
	}
	c := words(cmd)
	if findAction(c) != "" {
		return false
	}
	if len(c) < len(p) {
		return false
	}
	for i, w := range p {
		if c[i] != w {
			return false
		}
	}
	return true
}

// plainWord says w may be a word of a prefix: letters, digits and
// . _ - / + : = @ % , ~ ^ only (no quotes, no glob characters, nothing a
// shell would interpret).
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-/+:=@%,~^", r)) {
			return false
		}
	}
	return true
}

// CheckPrefix says why prefix cannot be granted for the command cmd: it
// must be plain words that begin cmd.
func CheckPrefix(prefix, cmd string) error {
	p := words(prefix)
	switch {
	case len(p) == 0:
		return errors.New("the prefix is empty; give the first word(s) of the command, such as `go test`")
	case len(prefix) > MaxPrefixBytes:
		return fmt.Errorf("the prefix is %d bytes; at most %d are accepted", len(prefix), MaxPrefixBytes)
	}
	for _, w := range p {
		if !plainWord(w) {
			return fmt.Errorf("the prefix word %q is not plain: use letters, digits and . _ - / + : = @ %% , ~ ^ only", w)
		}
	}
	c := words(cmd)
	if len(c) < len(p) {
		return fmt.Errorf("the prefix %q is longer than the command", NormalPrefix(prefix))
	}
	for i, w := range p {
		if c[i] != w {
			return fmt.Errorf("the prefix %q does not begin the command: its word %d is %q", NormalPrefix(prefix), i+1, c[i])
		}
	}
	if why := runnerWhy(p); why != "" {
		return errors.New(runnerRefusal(p, why))
	}
	if a := findAction(p); a != "" {
		return fmt.Errorf("the prefix %q holds `%s`, with which find runs or changes other things; grant `find` without it", NormalPrefix(prefix), a)
	}
	return nil
}

// NormalPrefix is prefix with its words separated by one space.
func NormalPrefix(prefix string) string { return strings.Join(words(prefix), " ") }

// proposePrefix is the prefix offered for a command: its first word, and
// the second too when it looks like a subcommand (`go test`, `npm run`,
// `git status`); for a shell, interpreter or command runner, the words up
// to its fixed script (`python3 scripts/check.py`); "" when the first word
// is not plain or a runner has no fixed script. When it proposes none
// because the first word runs other code, the second result says why.
func proposePrefix(cmd string) (string, string) {
	c := words(cmd)
	if len(c) == 0 || !plainWord(c[0]) {
		return "", ""
	}
	if runnerWhy(c[:1]) != "" {
		if i := scriptAt(c); i > 0 && allPlain(c[:i+1]) && runnerWhy(c[:i+1]) == "" {
			return strings.Join(c[:i+1], " "), ""
		}
		return "", runnerWhy(c[:1]) + ": no prefix is offered, a session grant covers this exact command only"
	}
	if findAction(c) != "" {
		return "", "`find` with `" + findAction(c) + "` runs or changes other things: no prefix is offered, a session grant covers this exact command only"
	}
	if len(c) > 1 && subcommand(c[1]) {
		return c[0] + " " + c[1], ""
	}
	return c[0], ""
}

func allPlain(ws []string) bool {
	for _, w := range ws {
		if !plainWord(w) {
			return false
		}
	}
	return true
}

// subcommand: a lower-case word of letters, digits, - and _, starting with
// a letter.
func subcommand(w string) bool {
	for i, r := range w {
		ok := 'a' <= r && r <= 'z' || i > 0 && ('0' <= r && r <= '9' || r == '-' || r == '_')
		if !ok {
			return false
		}
	}
	return w != ""
}
