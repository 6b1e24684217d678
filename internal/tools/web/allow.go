package web

import (
	"fmt"
	"net/url"
	"strings"
)

// compilePatterns normalizes web.auto_approve_domains entries: a host or
// "*.host", lower-cased, trailing dot dropped.
func compilePatterns(entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		p := normalizeHost(e)
		host := strings.TrimPrefix(p, "*.")
		if host == "" || strings.ContainsAny(host, "*/:@ ?#") {
			return nil, fmt.Errorf("web.auto_approve_domains: %q is not a host or *.host pattern", e)
		}
		out = append(out, p)
	}
	return out, nil
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// autoApproved says u is an HTTPS URL on the default port whose host
// matches a pattern; "*." matches strict subdomains only. Another port is
// another service on the host (an admin console, a debug server), which
// the allowlist, a list of documentation sites, never vouched for.
func (f *fetcher) autoApproved(u *url.URL) bool {
	if u.Scheme != "https" || (u.Port() != "" && u.Port() != "443") {
		return false
	}
	host := normalizeHost(u.Hostname())
	for _, p := range f.patterns {
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}
