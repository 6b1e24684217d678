package agent

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Key values are redacted wherever the runtime shows text it did not
// write itself to a client: progress lines (a command may print a key) and
// provider error messages (an endpoint may echo the key it refused). The
// pattern-based Redact catches key-shaped text; secrets catches the
// configured values themselves, in any letter case and URL-encoded, and a
// piece of one cut at either end of the text.

// minSecretLen is the shortest value searched for: a shorter one would
// match ordinary words and says little on its own.
const minSecretLen = 8

// minPartial is the shortest piece of a value, cut at an end of the text,
// that is still redacted.
const minPartial = 6

// secrets redacts the configured key values; the zero value redacts none.
type secrets struct {
	re    *regexp.Regexp
	forms []string // lower-cased forms, for the pieces at the ends
}

func newSecrets(values []string) secrets {
	var forms []string
	for _, v := range values {
		if len(v) < minSecretLen {
			continue
		}
		for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			forms = append(forms, strings.ToLower(f))
		}
	}
	slices.Sort(forms)
	forms = slices.Compact(forms)
	if len(forms) == 0 {
		return secrets{}
	}
	// Longest first, so a value is never half-replaced by a shorter one.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	quoted := make([]string, len(forms))
	for i, f := range forms {
		quoted[i] = regexp.QuoteMeta(f)
	}
	return secrets{re: regexp.MustCompile(`(?i)(` + strings.Join(quoted, "|") + `)`), forms: forms}
}

// redact replaces every occurrence of a value (any case, plain or
// URL-encoded) with "…", and a piece of at least minPartial bytes of one
// at the very start or end of s (left by a cut).
func (k secrets) redact(s string) string {
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
