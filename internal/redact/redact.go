// Package redact removes key values from text SCV shows but did not write
// itself: tool progress lines (a command may print a key), provider error
// messages (an endpoint may echo the key it refused) and the WeChat
// bridge's replies. Credentials catches key-shaped text by its form; Values
// catches the configured values themselves, in any letter case and
// URL-encoded, and a piece of one cut at either end of the text. It imports
// only the standard library.
package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// credentialPattern is compiled on first use: compiled when the program
// starts, it would cost every command.
const credentialPattern = `(?i)(bearer\s+\S+|\b(sk|pk|rk|ghp|gho|ghs|xox[abp]|glpat)[-_][A-Za-z0-9_\-]{8,}|\bAKIA[0-9A-Z]{12,}|\b[A-Za-z0-9_]*(api[_-]?key|token|secret|password|passwd)[A-Za-z0-9_]*\s*[=:]\s*\S+)`

// Credentials replaces credential-looking values with "…".
func Credentials(s string) string {
	credential.once.Do(func() { credential.re = regexp.MustCompile(credentialPattern) })
	return credential.re.ReplaceAllString(s, "…")
}

var credential struct {
	once sync.Once
	re   *regexp.Regexp
}

// MinValueLen is the shortest value searched for: a shorter one would
// match ordinary words and says little on its own.
const MinValueLen = 8

// minPartial is the shortest piece of a value, cut at an end of the text,
// that is still redacted.
const minPartial = 6

// Values redacts configured key values; the zero value redacts none.
type Values struct {
	re    *regexp.Regexp
	forms []string // lower-cased forms, for the pieces at the ends
}

// NewValues returns the redactor of values; values shorter than
// MinValueLen are left out.
func NewValues(values []string) Values {
	var forms []string
	for _, v := range values {
		if len(v) < MinValueLen {
			continue
		}
		for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			forms = append(forms, strings.ToLower(f))
		}
	}
	slices.Sort(forms)
	forms = slices.Compact(forms)
	if len(forms) == 0 {
		return Values{}
	}
	// Longest first, so a value is never half-replaced by a shorter one.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	quoted := make([]string, len(forms))
	for i, f := range forms {
		quoted[i] = regexp.QuoteMeta(f)
	}
	return Values{re: regexp.MustCompile(`(?i)(` + strings.Join(quoted, "|") + `)`), forms: forms}
}

// Redact replaces every occurrence of a value (any case, plain or
// URL-encoded) with "…", and a piece of at least minPartial bytes of one
// at the very start or end of s (left by a cut).
func (k Values) Redact(s string) string {
	if k.re == nil {
		return s
	}
	s = k.re.ReplaceAllString(s, "…")
	// A cut text often ends with an ellipsis after the cut: the piece is
	// looked for before it.
	body := strings.TrimRight(s, " .…")
	end := s[len(body):]
	lower := strings.ToLower(body)
	if len(lower) != len(body) {
		return s // a case change that moves bytes: only whole values are safe to find
	}
	for _, f := range k.forms {
		for n := len(f) - 1; n >= minPartial; n-- {
			if strings.HasSuffix(lower, f[:n]) {
				body, lower = body[:len(body)-n]+"…", lower[:len(lower)-n]+"…"
				break
			}
		}
		for n := len(f) - 1; n >= minPartial; n-- {
			if strings.HasPrefix(lower, f[len(f)-n:]) {
				body, lower = "…"+body[n:], "…"+lower[n:]
				break
			}
		}
	}
	return body + end
}
