package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
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

// isEnvName: [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '_') || i == 0 && '0' <= c && c <= '9' {
			return false
		}
	}
	return s != ""
}

func envName(s string) string {
	if s != "" && !isEnvName(s) {
		return fmt.Sprintf("%q is not an environment variable name", s)
	}
	return ""
}

// isEffortWord: a lower-case letter, then up to 31 of [a-z_-].
func isEffortWord(s string) bool {
	if s == "" || len(s) > 32 || !isLower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func effortWord(s string) string {
	if s != "" && !isEffortWord(s) {
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

// envRemoveEntry checks one tools.bash_env_remove entry: a variable name,
// optionally ending in '*' (a prefix), or ProviderKeys.
func envRemoveEntry(s string) string {
	if s == ProviderKeys || isEnvName(strings.TrimSuffix(s, "*")) {
		return ""
	}
	return fmt.Sprintf("%q is not a variable name, a NAME* prefix or %q", s, ProviderKeys)
}

// isHostLabel: 1-63 of [a-z0-9-], neither starting nor ending with '-'.
func isHostLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !isLower(c) && !('0' <= c && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// domainEntry checks one auto_approve_domains entry: "host" or "*.host".
func domainEntry(s string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimPrefix(s, "*.")), ".")
	if h == "" || len(h) > 253 {
		return fmt.Sprintf("%q is not a host name or *.host", s)
	}
	for _, l := range strings.Split(h, ".") {
		if !isHostLabel(l) {
			return fmt.Sprintf("%q is not a host name or *.host (no scheme, port, path or inner *)", s)
		}
	}
	return ""
}

// isHeaderName: an HTTP token, 1 or more of [!#$%&'*+.^_`|~0-9A-Za-z-].
func isHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("!#$%&'*+.^_`|~-", rune(c)) {
			return false
		}
	}
	return s != ""
}

func checkHeaders(h map[string]Secret) string {
	for name, v := range h {
		if !isHeaderName(name) {
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
	case reflect.Float64:
		if v.Float() < 0 {
			return fmt.Sprintf("%v is negative; a price is US dollars per million tokens, 0 or more", v.Float())
		}
	case reflect.Int:
		if v.Int() < int64(spec.min) {
			return fmt.Sprintf("%d is below the least allowed value %d", v.Int(), spec.min)
		}
	case reflect.String:
		if spec.check != nil {
			return spec.check(v.String())
		}
	case reflect.Slice:
		if hs, ok := v.Interface().([]HookRun); ok {
			return checkHooks(hs)
		}
		if _, ok := v.Interface().([]ApprovalRule); ok {
			return "" // each rule is checked as its layer adds it (layerRules)
		}
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

// PolicyAlias returns the approval policy a deprecated name stands for.
// "never" read as "never ask" to users of other agents, when it denies
// every call with side effects; the names now say what happens.
func PolicyAlias(s string) (string, bool) {
	switch s {
	case "on-risk":
		return PolicyAskOnRisk, true
	case "always":
		return PolicyAskAlways, true
	case "never":
		return PolicyDenyOnRisk, true
	}
	return "", false
}

// policyCheck accepts the approval policies and their deprecated aliases.
func policyCheck(s string) string {
	if _, ok := PolicyAlias(s); ok {
		return ""
	}
	return enum(PolicyAskOnRisk, PolicyAskAlways, PolicyDenyOnRisk, PolicyAskUnsandboxed)(s)
}

// policyRank orders the approval policies from weakest to strictest
// (aliases as what they stand for); -1 for an unknown one.
func policyRank(p string) int {
	if a, ok := PolicyAlias(p); ok {
		p = a
	}
	switch p {
	case PolicyAskUnsandboxed:
		return 0
	case PolicyAskOnRisk:
		return 1
	case PolicyAskAlways:
		return 2
	case PolicyDenyOnRisk:
		return 3
	}
	return -1
}

// sandboxRank orders the sandbox modes from loosest to strictest.
func sandboxRank(m string) int {
	switch m {
	case SandboxOff:
		return 0
	case SandboxWorkspaceWrite:
		return 1
	case SandboxReadOnly:
		return 2
	}
	return -1
}

// writableRoot checks one sandbox.writable_roots entry.
func writableRoot(s string) string {
	if !(filepath.IsAbs(s) || strings.HasPrefix(s, "~/")) {
		return fmt.Sprintf("%q must be an absolute path or start with ~/", s)
	}
	if filepath.Clean(s) == "/" {
		return `"/" would make every file writable; name the directories commands may write to`
	}
	return ""
}

// denyReadEntry checks one sandbox.deny_read entry.
func denyReadEntry(s string) string {
	if s == SCVHomeEntry || filepath.IsAbs(s) || strings.HasPrefix(s, "~/") {
		return ""
	}
	return fmt.Sprintf("%q must be an absolute path, start with ~/, or be %q", s, SCVHomeEntry)
}

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
		if r := policyRank(n); r >= 0 && r < policyRank(o) {
			return fmt.Sprintf("a project config may only make the approval policy stricter (ask-unsandboxed < ask-on-risk < ask-always < deny-on-risk): %q is weaker than %q", n, o)
		}
	case projSandboxMode:
		o, n := ov.String(), nv.String()
		if r := sandboxRank(n); r >= 0 && r < sandboxRank(o) {
			return fmt.Sprintf("a project config may only make the sandbox stricter (off < workspace-write < read-only): %q is looser than %q from the lower layers", n, o)
		}
	case projSubset:
		o, n := ov.Interface().([]string), nv.Interface().([]string)
		for _, x := range n {
			if !slices.Contains(o, x) {
				return fmt.Sprintf("a project config may only remove entries from this list: %q is not in %s from the lower layers", x, formatValue(ov))
			}
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
