package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be empty"
	}
	return ""
}

func enum(values ...string) func(string) string {
	return func(s string) string {
		for _, v := range values {
			if s == v {
				return ""
			}
		}
		return fmt.Sprintf("%q is not one of %s", s, strings.Join(quoteAll(values), ", "))
	}
}

func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

func httpURL(s string) string {
	u, err := url.Parse(s)
	if err == nil && u.User != nil || strings.Contains(s, "@") {
		// Checked first so that a URL with a password is never echoed.
		return "must not embed credentials (user:password@); use api_key_env or headers instead"
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http:// or https:// URL", s)
	}
	if u.Fragment != "" {
		return fmt.Sprintf("%q must not have a #fragment", s)
	}
	return ""
}

func optionalURL(s string) string {
	if s == "" {
		return ""
	}
	return httpURL(s)
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func envName(s string) string {
	if s != "" && !envNameRE.MatchString(s) {
		return fmt.Sprintf("%q is not an environment variable name", s)
	}
	return ""
}

var effortRE = regexp.MustCompile(`^[a-z][a-z_-]{0,31}$`)

func effortWord(s string) string {
	if s != "" && !effortRE.MatchString(s) {
		return fmt.Sprintf("%q is not an effort level such as low, medium or high", s)
	}
	return ""
}

func userDir(s string) string {
	if s == "" || !(filepath.IsAbs(s) || strings.HasPrefix(s, "~/")) {
		return fmt.Sprintf("%q must be an absolute path or start with ~/", s)
	}
	return ""
}

func projectDir(s string) string {
	if !filepath.IsLocal(s) {
		return fmt.Sprintf("%q must be a relative path inside the workspace (no leading /, no ..)", s)
	}
	return ""
}

var envPatternRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// envRemoveEntry checks one tools.bash_env_remove entry.
func envRemoveEntry(s string) string {
	if s == ProviderKeys || envPatternRE.MatchString(s) {
		return ""
	}
	return fmt.Sprintf("%q is not a variable name, a NAME* prefix or %q", s, ProviderKeys)
}

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// domainEntry checks one auto_approve_domains entry: "host" or "*.host".
func domainEntry(s string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimPrefix(s, "*.")), ".")
	if h == "" || len(h) > 253 {
		return fmt.Sprintf("%q is not a host name or *.host", s)
	}
	for _, l := range strings.Split(h, ".") {
		if !hostLabel.MatchString(l) {
			return fmt.Sprintf("%q is not a host name or *.host (no scheme, port, path or inner *)", s)
		}
	}
	return ""
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

func checkHeaders(h map[string]Secret) string {
	for name, v := range h {
		if !headerName.MatchString(name) {
			return fmt.Sprintf("%q is not a valid HTTP header name", name)
		}
		if strings.ContainsAny(v.Reveal(), "\r\n\x00") {
			return fmt.Sprintf("the value of header %q contains a line break or NUL", name)
		}
	}
	return ""
}

func checkArgs(pattern string, args []string) string {
	for _, a := range args {
		if strings.ContainsRune(a, 0) {
			return "arguments must not contain NUL"
		}
	}
	placeholder := map[string]string{"agents.*.model_args": "{model}", "agents.*.effort_args": "{effort}"}[pattern]
	if placeholder == "" || len(args) == 0 {
		return ""
	}
	for _, a := range args {
		if strings.Contains(a, placeholder) {
			return ""
		}
	}
	return fmt.Sprintf("must hold %s in one argument (or be [] to not offer the option)", placeholder)
}

// validateLeaf checks one value on its own; "" means valid.
func validateLeaf(pattern string, v reflect.Value) string {
	spec := specs[pattern]
	switch v.Kind() {
	case reflect.Int:
		if v.Int() < int64(spec.min) {
			return fmt.Sprintf("%d is below the least allowed value %d", v.Int(), spec.min)
		}
	case reflect.String:
		if spec.check != nil {
			return spec.check(v.String())
		}
	case reflect.Slice:
		for _, s := range v.Interface().([]string) {
			if spec.check == nil {
				break
			}
			if msg := spec.check(s); msg != "" {
				return msg
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return checkArgs(pattern, *v.Interface().(*[]string))
		}
	case reflect.Map:
		if pattern == "mcp.servers.*.env" {
			return checkEnv(v.Interface().(map[string]Secret))
		}
		return checkHeaders(v.Interface().(map[string]Secret))
	}
	return ""
}

var policyRank = map[string]int{PolicyOnRisk: 0, PolicyAlways: 1, PolicyNever: 2}

// projectCheck says why an untrusted project config may not give key the
// value nv over the lower layers' ov; "" allows it.
func projectCheck(pattern string, ov, nv reflect.Value) string {
	switch specs[pattern].proj {
	case projLower:
		if nv.Int() > ov.Int() {
			return fmt.Sprintf("a project config may only lower limits: %d exceeds %d from the lower layers", nv.Int(), ov.Int())
		}
	case projStricter:
		o, n := ov.String(), nv.String()
		if r, ok := policyRank[n]; ok && r < policyRank[o] {
			return fmt.Sprintf("a project config may only make the approval policy stricter (on-risk < always < never): %q is weaker than %q", n, o)
		}
	case projDisable:
		if nv.Bool() && !ov.Bool() {
			return "a project config may only turn this off: the lower layers have it off"
		}
	case projSearch:
		if n := nv.String(); n != SearchOff && n != ov.String() {
			return fmt.Sprintf("a project config may only set web.search = %q (the lower layers give %q)", SearchOff, ov.String())
		}
	case projNarrow:
		return narrowList(ov, nv)
	case projGrow:
		return growList(ov, nv)
	case projAllow:
	default:
		return "a project config may not set this key (project configs are untrusted); set it in the user config, the --config file or a flag"
	}
	return ""
}
