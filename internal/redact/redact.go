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

// The credential patterns are compiled on first use: compiled when the
// program starts, they would cost every command. A named value keeps its
// name ("GITHUB_TOKEN=…", "--password …"); a value known by its form
// (a bearer token, a key with a vendor's prefix) goes whole.
//
// Each pattern has the lower-case words one of which any match contains:
// most text has none, and looking for them costs far less than the
// pattern.
var credentialPatterns = []struct {
	re, repl string
	words    []string
}{
	// --api-key VALUE, --auth-token=VALUE, -password VALUE: the next word,
	// unless it is another flag.
	{`(?i)(\s|^)(--?[a-z0-9_-]*(?:key|token|secret|password|passwd|pwd|credential|auth)[a-z0-9_-]*)(=|\s+)([^\s\-…]\S*)`, "${1}${2}${3}…",
		[]string{"key", "token", "secret", "passw", "pwd", "credential", "auth"}},
	// NAME=value, NAME: value, "name": "value".
	{`(?i)\b([a-z0-9_]*(?:api[_-]?key|token|secret|password|passwd|credential)[a-z0-9_]*)(["']?\s*[=:]\s*["']?)([^\s"'…][^\s"']*)`, "${1}${2}…",
		[]string{"key", "token", "secret", "passw", "credential"}},
	// Authorization schemes.
	{`(?i)\b(bearer\s+[^\s"']+|basic\s+[a-z0-9+/=]{12,})`, "…", []string{"bearer", "basic"}},
	// Vendors' key prefixes.
	{`\b((?i:sk|pk|rk|ghp|gho|ghs|ghu|ghr|xox[abpers]|glpat|xai|hf|npm)[-_][A-Za-z0-9_\-]{8,}|github_pat_[A-Za-z0-9_]{20,}|AIza[0-9A-Za-z_\-]{30,}|AKIA[0-9A-Z]{12,}|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+)`, "…",
		[]string{"sk-", "sk_", "pk-", "pk_", "rk-", "rk_", "gh", "xox", "glpat", "xai", "hf-", "hf_", "npm", "aiza", "akia", "eyj"}},
	// user:password@ in a URL.
	{`(://)[^/\s:@]+:[^/\s@]+@`, "${1}…@", []string{"@"}},
}

// Credentials replaces credential-looking values with "…".
func Credentials(s string) string {
	credential.once.Do(func() {
		for _, p := range credentialPatterns {
			credential.res = append(credential.res, regexp.MustCompile(p.re))
		}
	})
	lower := strings.ToLower(s)
	for i, re := range credential.res {
		p := credentialPatterns[i]
		if !slices.ContainsFunc(p.words, func(w string) bool { return strings.Contains(lower, w) }) {
			continue
		}
		s = re.ReplaceAllString(s, p.repl)
		lower = strings.ToLower(s)
	}
	return s
}

var credential struct {
	once sync.Once
	res  []*regexp.Regexp
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
